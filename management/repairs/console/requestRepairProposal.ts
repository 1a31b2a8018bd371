import { REPAIR_REQUEST_ERRORS } from '../requestRepairProposal.js';
import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readIdempotencyKey } from '../../operations/idempotency.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { requestRepairProposal } from '../repairRequest.js';
import { repairRequestBody, repairRequestReceiptResponse } from '../schemas.js';
import { CONSOLE_REPAIR_WRITE_ERRORS, consoleRepairActor } from './sessionActor.js';

const params = withWorkspaceSlug({
  required: ['connectionId', 'incidentId'],
  properties: { connectionId: { type: 'string' }, incidentId: { type: 'string' } },
});

/**
 * POST /workspaces/{workspaceSlug}/connections/{connectionId}/incidents/{incidentId}/repair-proposals:
 * the CLI's repair request (03 Reviewed repairs) for the signed-in owner or admin of an active
 * workspace, with the same body, `Idempotency-Key`, admission, limits, receipt (202, a replay
 * `replayed: true`) and audit row; the actor is the user with no CLI client. Order: session (401),
 * CSRF (403), write pause (503), body (400), `Idempotency-Key` (400), the workspace (404, viewer
 * 403, archived 409), then the CLI route's order.
 */
export default async function consoleRequestRepairProposalRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; connectionId: string; incidentId: string }; Body: { datasetId?: string } }>(
    '/workspaces/:workspaceSlug/connections/:connectionId/incidents/:incidentId/repair-proposals',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_repair_request',
        errors: [...CONSOLE_REPAIR_WRITE_ERRORS, ...REPAIR_REQUEST_ERRORS],
      },
      schema: { params, body: repairRequestBody, response: { 202: repairRequestReceiptResponse } },
    },
    async (request, reply) => {
      const idempotencyKey = readIdempotencyKey(request);
      const { workspaceSlug, connectionId, incidentId } = request.params;
      const actor = await consoleRepairActor(app.deps, sessionOf(request), workspaceSlug);
      const receipt = await requestRepairProposal(app.deps, actor, {
        connectionId,
        incidentId,
        datasetId: request.body.datasetId ?? null,
        idempotencyKey,
      });
      return reply.code(202).send(receipt);
    },
  );
}
