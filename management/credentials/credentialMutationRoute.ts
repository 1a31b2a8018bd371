import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { performCredentialAction, type CredentialAction } from './credentialService.js';
import { connectionParams, credentialReceiptSchema, firstCredentialReceiptSchema } from './schemas.js';
import type { ErrorCode } from '../../shared/errors/index.js';

/** The domain codes of each action (01 Errors, Credentials; what credentialService throws). */
const ACTION_ERRORS: Record<CredentialAction, readonly ErrorCode[]> = {
  issue: ['credential_already_issued'],
  rotate: ['credential_not_issued'],
  revoke: ['credential_not_issued'],
};
const COMMON_ERRORS: readonly ErrorCode[] = [
  'connection_not_found',
  'operation_not_found',
  'workspace_unavailable',
  'workspace_modes_unavailable',
  'connection_configuration_changed',
  'idempotency_key_required',
  'idempotency_conflict',
];

/**
 * The body of issue, rotate and revoke: only the reviewed `expectedRevision`. Anything else,
 * a tenant or a mode included, is 400 `invalid_credential_request`.
 */
const body = {
  type: 'object',
  required: ['expectedRevision'],
  properties: { expectedRevision: { type: 'string' } },
  additionalProperties: false,
} as const;

/** Registers POST /v1/connections/{connectionId}/credentials/{action} for one action. */
export function registerCredentialMutation(app: FastifyInstance, action: CredentialAction): void {
  app.post<{ Params: { connectionId: string }; Body: { expectedRevision: string } }>(
    `/v1/connections/:connectionId/credentials/${action}`,
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' }), rejectPausedWrite],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: { validationError: 'invalid_credential_request', errors: [...COMMON_ERRORS, ...ACTION_ERRORS[action]] },
      schema: {
        params: connectionParams,
        body,
        response: {
          201: action === 'revoke' ? credentialReceiptSchema : firstCredentialReceiptSchema,
          200: credentialReceiptSchema,
        },
      },
    },
    async (request, reply) => {
      const idempotencyKey = readIdempotencyKey(request);
      const result = await performCredentialAction(app.deps, apiKeyPrincipalOf(request), {
        action,
        connectionId: request.params.connectionId,
        expectedRevision: request.body.expectedRevision,
        idempotencyKey,
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
