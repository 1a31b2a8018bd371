import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readIdempotencyKey } from '../../operations/idempotency.js';
import { applyConsoleConfigurationOperation } from './consoleConfigurationService.js';
import { applyBody, noQuery, operationParams, receiptSchema } from './schemas.js';

/** POST /workspaces/{workspaceSlug}/configuration-operations/{operationId}/apply (02): 201 receipt, 200 on an identical retry. */
export default async function consoleApplyOperationRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; operationId: string }; Body: { approvalFingerprint: string } }>(
    '/workspaces/:workspaceSlug/configuration-operations/:operationId/apply',
    {
      onRequest: [sessionAuth()],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_configuration_request',
        errors: [
          'workspace_not_found',
          'workspace_unavailable',
          'forbidden',
          'operation_not_found',
          'integration_not_found',
          'approval_mismatch',
          'configuration_preview_stale',
          'configuration_preview_expired',
          'configuration_destination_conflict',
          'configuration_compensation_unavailable',
          'idempotency_key_required',
          'idempotency_conflict',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: applyBody, response: { 200: receiptSchema, 201: receiptSchema } },
    },
    async (request, reply) => {
      const result = await applyConsoleConfigurationOperation(app.deps, sessionOf(request), request.params.workspaceSlug, {
        operationId: request.params.operationId,
        approvalFingerprint: request.body.approvalFingerprint,
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
