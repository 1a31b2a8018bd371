import type { FastifyInstance } from 'fastify';
import { cliAuth, cliPrincipalOf } from '../auth/cliAuth.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { listCliWorkspaces, type AccountListQuery } from './cliAccountService.js';
import { listQuery, workspaceListResponse } from './schemas.js';

/**
 * GET /v1/cli/workspaces[?limit][&cursor] (03 Account routes): the active workspaces where the
 * user is owner, admin or viewer; no workspace header. Bad members → 400 `invalid_workspace_query`.
 */
export default async function listWorkspacesRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: AccountListQuery }>(
    '/v1/cli/workspaces',
    {
      onRequest: [cliAuth()],
      config: { validationError: 'invalid_workspace_query', errors: ['invalid_workspace_query'] },
      schema: { querystring: listQuery, response: { 200: workspaceListResponse } },
    },
    async (request, reply) => {
      const page = await listCliWorkspaces(app.deps, cliPrincipalOf(request), request.query);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...page });
    },
  );
}
