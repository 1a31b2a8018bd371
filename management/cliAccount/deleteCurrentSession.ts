import type { FastifyInstance } from 'fastify';
import { cliAuth, cliPrincipalOf } from '../auth/cliAuth.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { logoutCliClient } from './cliAccountService.js';
import { noQuery, revokedResponse } from './schemas.js';

/**
 * DELETE /v1/cli/session (03 Account routes, logout): disables the calling client and revokes
 * its consent, access and refresh tokens; the user's other clients are untouched.
 */
export default async function deleteCurrentSessionRoute(app: FastifyInstance): Promise<void> {
  app.delete(
    '/v1/cli/session',
    {
      onRequest: [cliAuth()],
      config: { validationError: 'invalid_cli_session_query', errors: [] },
      schema: { querystring: noQuery, response: { 200: revokedResponse } },
    },
    async (request, reply) => {
      await logoutCliClient(app.deps, cliPrincipalOf(request));
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, revoked: true });
    },
  );
}
