import type { ErrorCode } from '../../shared/errors/index.js';
import type { FastifyInstance } from 'fastify';
import { cliAuth } from '../auth/cliAuth.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { cliOperationActor } from './repairActor.js';
import { requestRepairProposal } from './repairRequest.js';
import { incidentParams, repairRequestBody, repairRequestReceiptResponse } from './schemas.js';

/** The repair request's errors beyond authentication (03 Reviewed repairs), for the CLI and console routes. */
export const REPAIR_REQUEST_ERRORS = [
  'idempotency_key_required',
  'idempotency_conflict',
  'authorization_changed',
  'repair_generator_unavailable',
  'workload_rate_limited',
  'connection_required',
  'connection_not_found',
  'incident_not_found',
  'incident_has_no_repair_assertion',
  'repair_already_pending',
  'sandbox_execution_busy',
  'sandbox_repair_monthly_limit',
  'repair_capacity_exceeded',
  'replay_evidence_capacity_exceeded',
  'repair_evidence_unavailable',
  'replay_evidence_unavailable',
  'replay_dataset_not_found',
  'replay_evidence_snapshot_changed',
] as const satisfies readonly ErrorCode[];

/**
 * POST /v1/cli/connections/{connectionId}/incidents/{incidentId}/repair-proposals (03 Reviewed
 * repairs, scope `repairs:create`, header `Idempotency-Key`, body `{}` or `{datasetId}`): 202 with
 * the `repair.request` receipt; a replay of the same request with the same key answers 202 again
 * with the original receipt and `replayed: true`.
 */
export default async function requestRepairProposalRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { connectionId: string; incidentId: string }; Body: { datasetId?: string } }>(
    '/v1/cli/connections/:connectionId/incidents/:incidentId/repair-proposals',
    {
      onRequest: [cliAuth({ scope: 'repairs:create', workspace: true })],
      config: {
        validationError: 'invalid_repair_request',
        errors: [...REPAIR_REQUEST_ERRORS],
      },
      schema: { params: incidentParams, body: repairRequestBody, response: { 202: repairRequestReceiptResponse } },
    },
    async (request, reply) => {
      const idempotencyKey = readIdempotencyKey(request);
      const { connectionId, incidentId } = request.params;
      const receipt = await requestRepairProposal(app.deps, cliOperationActor(request), {
        connectionId,
        incidentId,
        datasetId: request.body.datasetId ?? null,
        idempotencyKey,
      });
      return reply.code(202).send(receipt);
    },
  );
}
