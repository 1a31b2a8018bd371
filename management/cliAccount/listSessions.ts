import type { FastifyInstance } from 'fastify';
import { cliAuth, cliPrincipalOf } from '../auth/cliAuth.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { listCliSessions, type AccountListQuery } from './cliAccountService.js';
import { listQuery, sessionListResponse } from './schemas.js';

/**
 * GET /v1/cli/sessions[?limit][&cursor] (03 Account routes): the user's CLI clients with a
 * `current` flag, never tokens. Bad members → 400 `invalid_cli_session_query`.
 */
export default async function listSessionsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: AccountListQuery }>(
    '/v1/cli/sessions',
    {
      onRequest: [cliAuth()],
      config: { validationError: 'invalid_cli_session_query', errors: ['invalid_cli_session_query'] },
      schema: { querystring: listQuery, response: { 200: sessionListResponse } },
    },
    async (request, reply) => {
      const page = await listCliSessions(app.deps, cliPrincipalOf(request), request.query);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...page });
    },
  );
}
