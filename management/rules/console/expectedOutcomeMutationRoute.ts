import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readIdempotencyKey } from '../../operations/idempotency.js';
import { RULE_MUTATION_ERRORS, ruleMutationInput } from '../ruleMutationRoute.js';
import type { RuleAction, RuleMutationBody } from '../ruleService.js';
import { mutateExpectedOutcome } from './consoleRuleService.js';
import {
  createBody,
  deleteBody,
  expectedOutcomeMutationResponse,
  expectedOutcomeParams,
  expectedOutcomesParams,
  noQuery,
  updateBody,
} from './schemas.js';

const COLLECTION = '/workspaces/:workspaceSlug/integrations/:connectionId/expected-outcomes';
const ROUTES = {
  create: { method: 'POST', url: COLLECTION, params: expectedOutcomesParams, body: createBody },
  update: { method: 'PATCH', url: `${COLLECTION}/:ruleId`, params: expectedOutcomeParams, body: updateBody },
  delete: { method: 'DELETE', url: `${COLLECTION}/:ruleId`, params: expectedOutcomeParams, body: deleteBody },
} as const;

/** Registers one of the console's POST, PATCH and DELETE of 02 "Console rule routes". */
export function registerExpectedOutcomeMutation(app: FastifyInstance, action: RuleAction): void {
  const route = ROUTES[action];
  app.route<{ Params: { workspaceSlug: string; connectionId: string; ruleId?: string }; Body: RuleMutationBody }>({
    method: route.method,
    url: route.url,
    // sessionAuth checks CSRF and the write pause.
    onRequest: [sessionAuth()],
    // The Idempotency-Key header is checked before the body, as on every keyed route.
    preValidation: async (request) => {
      readIdempotencyKey(request);
    },
    config: { validationError: 'invalid_rule_request', errors: ['workspace_not_found', 'forbidden', ...RULE_MUTATION_ERRORS[action]] },
    schema: {
      params: route.params,
      querystring: noQuery,
      body: route.body,
      response: { 200: expectedOutcomeMutationResponse, 201: expectedOutcomeMutationResponse },
    },
    handler: async (request, reply) => {
      const result = await mutateExpectedOutcome(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        ruleMutationInput(action, request),
      );
      return reply.code(result.statusCode).send(result.body);
    },
  });
}
