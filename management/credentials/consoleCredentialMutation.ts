import type { FastifyInstance } from 'fastify';
import type { ErrorCode } from '../../shared/errors/index.js';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { activeWorkspaceManager } from '../auth/workspaceUserAuth.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { withWorkspaceSlug } from '../workspaces/schemas.js';
import { type CredentialAction, performCredentialAction } from './credentialService.js';
import { credentialReceiptSchema, firstCredentialReceiptSchema } from './schemas.js';

const ACTION_ERRORS: Record<CredentialAction, readonly ErrorCode[]> = {
  issue: ['credential_already_issued'],
  rotate: ['credential_not_issued'],
  revoke: ['credential_not_issued'],
};

const params = withWorkspaceSlug({ required: ['connectionId'], properties: { connectionId: { type: 'string' } } });

const body = {
  type: 'object',
  required: ['expectedRevision'],
  properties: { expectedRevision: { type: 'string' } },
  additionalProperties: false,
} as const;

/**
 * POST /workspaces/{workspaceSlug}/connections/{connectionId}/credentials/{issue|rotate|revoke}:
 * the console's credential writes (03 Account CLI OAuth 6: Live credential setup is done in the
 * dashboard; 02: browser-session adapters use the API's paths under /workspaces/{workspaceSlug}).
 * The API route's service, body, receipts, one-time `ingestToken` and errors, with the signed-in
 * owner or admin of an active workspace as the operation's actor (audit `actor_type user`). The
 * legacy writers under `/workspaces/{slug}/integrations/…` stay 409 `canonical_credential_required`.
 * Order: session (401), CSRF (403), write pause (503), `Idempotency-Key` (400), body (400), the
 * workspace (404, viewer 403, archived 409), then the API route's order.
 */
export default async function consoleCredentialMutation(app: FastifyInstance): Promise<void> {
  for (const action of ['issue', 'rotate', 'revoke'] as const) {
    app.post<{ Params: { workspaceSlug: string; connectionId: string }; Body: { expectedRevision: string } }>(
      `/workspaces/:workspaceSlug/connections/:connectionId/credentials/${action}`,
      {
        onRequest: [sessionAuth()],
        preValidation: async (request) => {
          readIdempotencyKey(request);
        },
        config: {
          validationError: 'invalid_credential_request',
          errors: [
            'workspace_not_found',
            'workspace_unavailable',
            'forbidden',
            'connection_not_found',
            'operation_not_found',
            'workspace_modes_unavailable',
            'connection_configuration_changed',
            'idempotency_key_required',
            'idempotency_conflict',
            ...ACTION_ERRORS[action],
          ],
        },
        schema: {
          params,
          body,
          response: { 201: action === 'revoke' ? credentialReceiptSchema : firstCredentialReceiptSchema, 200: credentialReceiptSchema },
        },
      },
      async (request, reply) => {
        const idempotencyKey = readIdempotencyKey(request);
        const actor = await activeWorkspaceManager(app.deps.pool, sessionOf(request), request.params.workspaceSlug);
        const result = await performCredentialAction(app.deps, actor, {
          action,
          connectionId: request.params.connectionId,
          expectedRevision: request.body.expectedRevision,
          idempotencyKey,
        });
        return reply.code(result.statusCode).send(result.body);
      },
    );
  }
}
