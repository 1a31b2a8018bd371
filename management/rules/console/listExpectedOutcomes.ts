import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readExpectedOutcomes } from './consoleRuleService.js';
import { expectedOutcomesParams, expectedOutcomesResponse, listQuery } from './schemas.js';

/** GET /workspaces/{workspaceSlug}/integrations/{connectionId}/expected-outcomes (02): owner or admin. */
export default async function listExpectedOutcomesRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { workspaceSlug: string; connectionId: string }; Querystring: { limit?: string; cursor?: string } }>(
    '/workspaces/:workspaceSlug/integrations/:connectionId/expected-outcomes',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_rule_request',
        errors: ['workspace_not_found', 'workspace_unavailable', 'forbidden', 'connection_not_found'],
      },
      schema: { params: expectedOutcomesParams, querystring: listQuery, response: { 200: expectedOutcomesResponse } },
    },
    async (request, reply) => {
      const view = await readExpectedOutcomes(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        request.params.connectionId,
        request.query,
      );
      return reply.send(view);
    },
  );
}
