import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { applyBody, firstReceiptSchema, noQuery, operationParams, receiptSchema } from './schemas.js';
import { applySetup } from './setupApply.js';

/** POST /v1/connection-setup/{operationId}/apply (02): 201 first apply with the token, 200 replay without. */
export default async function applyConnectionSetupRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { operationId: string }; Body: { approvalFingerprint: string } }>(
    '/v1/connection-setup/:operationId/apply',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' }), rejectPausedWrite],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_connection_setup',
        errors: [
          'operation_not_found',
          'integration_not_found',
          'approval_mismatch',
          'connection_preview_expired',
          'connection_preview_stale',
          'connection_already_configured',
          'workspace_unavailable',
          'idempotency_key_required',
          'idempotency_conflict',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: applyBody, response: { 200: receiptSchema, 201: firstReceiptSchema } },
    },
    async (request, reply) => {
      const result = await applySetup(app.deps, apiKeyPrincipalOf(request), {
        operationId: request.params.operationId,
        approvalFingerprint: request.body.approvalFingerprint,
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
