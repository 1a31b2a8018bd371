import type { FastifyInstance } from 'fastify';
import { cliAuth } from '../auth/cliAuth.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { cliOperationActor } from '../repairs/repairActor.js';
import { applyDecision } from './decisionApply.js';
import { applyBody, decisionReceiptSchema, noQuery, operationParams } from './schemas.js';

/**
 * POST /v1/cli/operations/{operationId}/apply (03 Reviewed repairs, scope `repairs:approve`,
 * header Idempotency-Key): 200 receipt `repair.decision`.
 */
export default async function applyRepairDecisionRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { operationId: string }; Body: { approvalFingerprint: string } }>(
    '/v1/cli/operations/:operationId/apply',
    {
      onRequest: [cliAuth({ scope: 'repairs:approve', workspace: true })],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_repair_request',
        errors: [
          'idempotency_key_required',
          'idempotency_conflict',
          'operation_not_found',
          'authorization_changed',
          'review_expired',
          'approval_mismatch',
          'review_stale',
          'workspace_unavailable',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: applyBody, response: { 200: decisionReceiptSchema } },
    },
    async (request, reply) => {
      const result = await applyDecision(app.deps, cliOperationActor(request), {
        operationId: request.params.operationId,
        approvalFingerprint: request.body.approvalFingerprint,
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
