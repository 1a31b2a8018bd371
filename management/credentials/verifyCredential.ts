import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { verifyCredential } from './credentialService.js';
import { connectionParams, credentialStateSchema } from './schemas.js';

const body = {
  type: 'object',
  required: ['connectionKey', 'ingestToken'],
  properties: { connectionKey: { type: 'string' }, ingestToken: { type: 'string' } },
  additionalProperties: false,
} as const;

/**
 * POST /v1/connections/{connectionId}/credentials/verify. It writes nothing, so the maintenance
 * write pause does not apply and no Idempotency-Key is needed (docs/decisions/integrations.md).
 */
export default async function verifyCredentialRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { connectionId: string }; Body: { connectionKey: string; ingestToken: string } }>(
    '/v1/connections/:connectionId/credentials/verify',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' })],
      config: {
        validationError: 'invalid_credential_request',
        errors: [
          'connection_not_found',
          'workspace_unavailable',
          'workspace_modes_unavailable',
          'connection_configuration_changed',
          'credential_not_issued',
          'credential_verification_failed',
          'idempotency_key_required',
          'idempotency_conflict',
        ],
      },
      schema: {
        params: connectionParams,
        body,
        response: {
          200: {
            type: 'object',
            required: ['status', 'credential', 'applicationVerified'],
            properties: {
              status: { type: 'string', enum: ['connection_verified'] },
              credential: credentialStateSchema,
              applicationVerified: { type: 'boolean' },
            },
          },
        },
      },
    },
    async (request) => {
      const credential = await verifyCredential(app.deps, apiKeyPrincipalOf(request), request.params.connectionId, request.body);
      // A matching pair proves only the stored credential, never that an application installed it.
      return { status: 'connection_verified', credential, applicationVerified: false };
    },
  );
}
