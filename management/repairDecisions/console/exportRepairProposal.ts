import { REPAIR_EXPORT_ERRORS } from '../exportRepairProposal.js';
import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readIdempotencyKey } from '../../operations/idempotency.js';
import { CONSOLE_REPAIR_WRITE_ERRORS, consoleRepairActor } from '../../repairs/console/sessionActor.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { type ExportTarget, exportRepair } from '../repairExport.js';
import { exportBody, exportReceiptSchema, noQuery } from '../schemas.js';

const params = withWorkspaceSlug({
  required: ['connectionId', 'proposalId'],
  properties: { connectionId: { type: 'string' }, proposalId: { type: 'string' } },
});

/**
 * POST /workspaces/{workspaceSlug}/connections/{connectionId}/repair-proposals/{proposalId}/export:
 * the CLI's export (03 Reviewed repairs 4 and 5) for the signed-in owner or admin of an active
 * workspace, 200 receipt `repair.export` whose data is the bundle; same body, admission,
 * refusals and audit row as the CLI route.
 */
export default async function consoleExportRepairProposalRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; connectionId: string; proposalId: string }; Body: { target?: ExportTarget } }>(
    '/workspaces/:workspaceSlug/connections/:connectionId/repair-proposals/:proposalId/export',
    {
      onRequest: [sessionAuth()],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_repair_request',
        errors: [...CONSOLE_REPAIR_WRITE_ERRORS, ...REPAIR_EXPORT_ERRORS],
      },
      schema: { params, querystring: noQuery, body: exportBody, response: { 200: exportReceiptSchema } },
    },
    async (request, reply) => {
      const idempotencyKey = readIdempotencyKey(request);
      const { workspaceSlug, connectionId, proposalId } = request.params;
      const actor = await consoleRepairActor(app.deps, sessionOf(request), workspaceSlug);
      const result = await exportRepair(app.deps, actor, {
        connectionId,
        proposalId,
        target: request.body.target ?? 'files',
        idempotencyKey,
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
