import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readConsoleRuleOperation } from './consoleRuleService.js';
import { noQuery, receiptSchema, ruleOperationParams } from './schemas.js';

/** GET /workspaces/{workspaceSlug}/rule-operations/{operationId} (02): the performer's completed receipt. */
export default async function getConsoleRuleOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { workspaceSlug: string; operationId: string } }>(
    '/workspaces/:workspaceSlug/rule-operations/:operationId',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_rule_request',
        errors: ['workspace_not_found', 'workspace_unavailable', 'forbidden', 'operation_not_found'],
      },
      schema: { params: ruleOperationParams, querystring: noQuery, response: { 200: receiptSchema } },
    },
    async (request, reply) => {
      const receipt = await readConsoleRuleOperation(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        request.params.operationId,
      );
      return reply.send(receipt);
    },
  );
}
