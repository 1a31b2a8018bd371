import type { FastifyInstance } from 'fastify';
import { apiKeyAuth, principalOf } from '../auth/apiKeyAuth.js';
import { readCredentialStatus } from './credentialService.js';
import { connectionParams, credentialStateSchema } from './schemas.js';

/** GET /v1/connections/{connectionId}/credentials (01 Connection credential lifecycle: Status). */
export default async function getCredentialStatus(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string } }>(
    '/v1/connections/:connectionId/credentials',
    {
      onRequest: [apiKeyAuth('integrations:manage')],
      config: { validationError: 'invalid_credential_request', errors: ['connection_not_found', 'workspace_modes_unavailable'] },
      schema: {
        params: connectionParams,
        response: { 200: { type: 'object', required: ['credential'], properties: { credential: credentialStateSchema } } },
      },
    },
    async (request) => {
      const credential = await readCredentialStatus(app.deps, principalOf(request), request.params.connectionId);
      return { credential };
    },
  );
}
