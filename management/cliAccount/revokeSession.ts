import type { FastifyInstance } from 'fastify';
import { cliAuth, cliPrincipalOf } from '../auth/cliAuth.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { revokeCliSession } from './cliAccountService.js';
import { clientParams, noQuery, revokedResponse } from './schemas.js';

/**
 * DELETE /v1/cli/sessions/{clientId} (03 Account routes): revokes one of the user's own CLI
 * clients, audited in the user's current workspaces; any other id is 404 `cli_session_not_found`.
 */
export default async function revokeSessionRoute(app: FastifyInstance): Promise<void> {
  app.delete<{ Params: { clientId: string } }>(
    '/v1/cli/sessions/:clientId',
    {
      onRequest: [cliAuth()],
      config: { validationError: 'invalid_cli_session_query', errors: ['cli_session_not_found'] },
      schema: { params: clientParams, querystring: noQuery, response: { 200: revokedResponse } },
    },
    async (request, reply) => {
      await revokeCliSession(app.deps, cliPrincipalOf(request), request.params.clientId);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, revoked: true });
    },
  );
}
