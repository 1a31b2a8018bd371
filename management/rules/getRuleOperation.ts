import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readRuleOperation } from './ruleService.js';
import { noQuery, operationParams, receiptSchema } from './schemas.js';

/** GET /v1/rule-operations/{operationId} (02): the completed receipt, for the key that performed it only. */
export default async function getRuleOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/rule-operations/:operationId',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'allow' })],
      config: { validationError: 'invalid_rule_request', errors: ['operation_not_found'] },
      schema: { params: operationParams, querystring: noQuery, response: { 200: receiptSchema } },
    },
    async (request, reply) => {
      const receipt = await readRuleOperation(app.deps, principalOf(request), request.params.operationId);
      return reply.send(receipt);
    },
  );
}
