import type { FastifyInstance } from 'fastify';
import { cliAuth, cliPrincipalOf } from '../auth/cliAuth.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { readIdentity } from './cliAccountService.js';
import { identityResponse, noQuery } from './schemas.js';

/** GET /v1/cli/me (03 Account routes): identity; no query parameters (400 `invalid_cli_query`). */
export default async function getMeRoute(app: FastifyInstance): Promise<void> {
  app.get(
    '/v1/cli/me',
    {
      onRequest: [cliAuth()],
      config: { validationError: 'invalid_cli_query', errors: [] },
      schema: { querystring: noQuery, response: { 200: identityResponse } },
    },
    async (request, reply) => {
      const identity = await readIdentity(app.deps, cliPrincipalOf(request));
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...identity });
    },
  );
}
