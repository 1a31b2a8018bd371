import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readCredentialStatus } from './credentialService.js';
import { connectionParams, credentialStateSchema } from './schemas.js';

/** GET /v1/connections/{connectionId}/credentials (01 Connection credential lifecycle: Status). */
export default async function getCredentialStatus(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string } }>(
    '/v1/connections/:connectionId/credentials',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' })],
      config: { validationError: 'invalid_credential_request', errors: ['connection_not_found', 'workspace_modes_unavailable'] },
      schema: {
        params: connectionParams,
        response: { 200: { type: 'object', required: ['credential'], properties: { credential: credentialStateSchema } } },
      },
    },
    async (request) => {
      const credential = await readCredentialStatus(app.deps, apiKeyPrincipalOf(request), request.params.connectionId);
      return { credential };
    },
  );
}
