import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { applyConfigurationOperation } from './configurationApply.js';
import { applyBody, noQuery, operationParams, receiptSchema } from './schemas.js';

/** POST /v1/configuration-operations/{operationId}/apply (02): 201 receipt, 200 on an identical retry. */
export default async function applyOperationRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { operationId: string }; Body: { approvalFingerprint: string } }>(
    '/v1/configuration-operations/:operationId/apply',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'allow' }), rejectPausedWrite],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_configuration_request',
        errors: [
          'operation_not_found',
          'integration_not_found',
          'approval_mismatch',
          'configuration_preview_stale',
          'configuration_preview_expired',
          'configuration_destination_conflict',
          'configuration_compensation_unavailable',
          'workspace_unavailable',
          'idempotency_key_required',
          'idempotency_conflict',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: applyBody, response: { 200: receiptSchema, 201: receiptSchema } },
    },
    async (request, reply) => {
      const result = await applyConfigurationOperation(app.deps, principalOf(request), {
        operationId: request.params.operationId,
        approvalFingerprint: request.body.approvalFingerprint,
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
