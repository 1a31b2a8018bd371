import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { listConnectionRules } from './ruleService.js';
import { connectionParams, listQuery, listResponse } from './schemas.js';

/** GET /v1/connections/{connectionId}/reconciliation-rules (02): oldest first, `limit` 1–100. */
export default async function listRulesRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string }; Querystring: { limit?: string; cursor?: string } }>(
    '/v1/connections/:connectionId/reconciliation-rules',
    {
      onRequest: [workspaceAuth('integrations:read', { cli: 'allow' })],
      config: { validationError: 'invalid_rule_request', errors: ['connection_not_found', 'invalid_rule_cursor', 'rule_cursor_stale'] },
      schema: { params: connectionParams, querystring: listQuery, response: { 200: listResponse } },
    },
    async (request, reply) => {
      const page = await listConnectionRules(app.deps, principalOf(request), request.params.connectionId, request.query);
      return reply.send(page);
    },
  );
}
