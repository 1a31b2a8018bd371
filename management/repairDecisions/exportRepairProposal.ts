import type { ErrorCode } from '../../shared/errors/index.js';
import type { FastifyInstance } from 'fastify';
import { cliAuth } from '../auth/cliAuth.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { cliOperationActor } from '../repairs/repairActor.js';
import { exportRepair, type ExportTarget } from './repairExport.js';
import { exportBody, exportReceiptSchema, noQuery, proposalParams } from './schemas.js';

/** The export's errors beyond authentication (03 Reviewed repairs), for the CLI and console routes. */
export const REPAIR_EXPORT_ERRORS = [
  'idempotency_key_required',
  'idempotency_conflict',
  'connection_required',
  'connection_not_found',
  'repair_proposal_not_found',
  'workload_rate_limited',
  'repair_export_not_validated',
  'repair_export_not_approved',
  'repair_export_not_available',
  'repair_export_fingerprint_mismatch',
  'repair_export_operation_unsupported',
  'repair_export_sensitive_content',
  'codehost_not_configured',
  'authorization_changed',
] as const satisfies readonly ErrorCode[];

/**
 * POST /v1/cli/connections/{connectionId}/repair-proposals/{proposalId}/export (03 Reviewed
 * repairs, scope `repairs:export`, owner or admin, header Idempotency-Key): 200 receipt
 * `repair.export` whose data is the bundle.
 */
export default async function exportRepairProposalRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { connectionId: string; proposalId: string }; Body: { target?: ExportTarget } }>(
    '/v1/cli/connections/:connectionId/repair-proposals/:proposalId/export',
    {
      onRequest: [cliAuth({ scope: 'repairs:export', workspace: true })],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_repair_request',
        errors: [...REPAIR_EXPORT_ERRORS, 'workspace_unavailable'],
      },
      schema: { params: proposalParams, querystring: noQuery, body: exportBody, response: { 200: exportReceiptSchema } },
    },
    async (request, reply) => {
      const result = await exportRepair(app.deps, cliOperationActor(request), {
        ...request.params,
        target: request.body.target ?? 'files',
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
