import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readConnectionRule } from './ruleService.js';
import { noQuery, readResponse, ruleParams } from './schemas.js';

/** GET /v1/connections/{connectionId}/reconciliation-rules/{ruleId} (02). */
export default async function getRuleRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; ruleId: string } }>(
    '/v1/connections/:connectionId/reconciliation-rules/:ruleId',
    {
      onRequest: [workspaceAuth('integrations:read', { cli: 'allow' })],
      config: { validationError: 'invalid_rule_request', errors: ['connection_not_found', 'expected_outcome_not_found'] },
      schema: { params: ruleParams, querystring: noQuery, response: { 200: readResponse } },
    },
    async (request, reply) => {
      const read = await readConnectionRule(app.deps, principalOf(request), request.params.connectionId, request.params.ruleId);
      return reply.send(read);
    },
  );
}
