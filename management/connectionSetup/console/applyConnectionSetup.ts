import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readIdempotencyKey } from '../../operations/idempotency.js';
import { applyConsoleSetup } from './consoleSetupService.js';
import { applyBody, firstReceiptSchema, noQuery, operationParams, receiptSchema } from './schemas.js';

/** POST /workspaces/{workspaceSlug}/connection-setup/{operationId}/apply (02): 201 with the token once, 200 replay without. */
export default async function consoleApplyConnectionSetupRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; operationId: string }; Body: { approvalFingerprint: string } }>(
    '/workspaces/:workspaceSlug/connection-setup/:operationId/apply',
    {
      onRequest: [sessionAuth()],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_connection_setup',
        errors: [
          'workspace_not_found',
          'workspace_unavailable',
          'forbidden',
          'operation_not_found',
          'integration_not_found',
          'approval_mismatch',
          'connection_preview_expired',
          'connection_preview_stale',
          'connection_already_configured',
          'idempotency_key_required',
          'idempotency_conflict',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: applyBody, response: { 200: receiptSchema, 201: firstReceiptSchema } },
    },
    async (request, reply) => {
      const result = await applyConsoleSetup(app.deps, sessionOf(request), request.params.workspaceSlug, {
        operationId: request.params.operationId,
        approvalFingerprint: request.body.approvalFingerprint,
        idempotencyKey: readIdempotencyKey(request),
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
