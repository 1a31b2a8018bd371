import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { mutateRule, type RuleAction, type RuleMutationBody, type RuleMutationInput } from './ruleService.js';
import { connectionParams, createBody, deleteBody, noQuery, receiptSchema, ruleParams, updateBody } from './schemas.js';
import type { ErrorCode } from '../../shared/errors/index.js';

/** The domain codes of each mutation (02 Errors, Rules; what ruleService throws). */
export const RULE_MUTATION_ERRORS: Record<RuleAction, readonly ErrorCode[]> = {
  create: [
    'connection_not_found',
    'expected_outcome_already_exists',
    'expected_outcome_limit_reached',
    'connection_configuration_changed',
    'operation_not_found',
    'workspace_unavailable',
    'idempotency_key_required',
    'idempotency_conflict',
    'rate_limited',
  ],
  update: [
    'connection_not_found',
    'expected_outcome_not_found',
    'expected_outcome_already_exists',
    'connection_configuration_changed',
    'operation_not_found',
    'workspace_unavailable',
    'idempotency_key_required',
    'idempotency_conflict',
    'rate_limited',
  ],
  delete: [
    'connection_not_found',
    'expected_outcome_not_found',
    'expected_outcome_has_incident_history',
    'connection_configuration_changed',
    'operation_not_found',
    'workspace_unavailable',
    'idempotency_key_required',
    'idempotency_conflict',
    'rate_limited',
  ],
};

const ROUTES = {
  create: { method: 'POST', url: '/v1/connections/:connectionId/reconciliation-rules', params: connectionParams, body: createBody },
  update: { method: 'PATCH', url: '/v1/connections/:connectionId/reconciliation-rules/:ruleId', params: ruleParams, body: updateBody },
  delete: { method: 'DELETE', url: '/v1/connections/:connectionId/reconciliation-rules/:ruleId', params: ruleParams, body: deleteBody },
} as const;

/** The mutation a request asks for (API or console): its path ids, body and Idempotency-Key. */
export function ruleMutationInput(
  action: RuleAction,
  request: FastifyRequest<{ Params: { connectionId: string; ruleId?: string }; Body: RuleMutationBody }>,
): RuleMutationInput {
  return {
    action,
    connectionId: request.params.connectionId,
    ...(request.params.ruleId !== undefined ? { ruleId: request.params.ruleId } : {}),
    body: request.body,
    idempotencyKey: readIdempotencyKey(request),
  };
}

/** Registers one of POST, PATCH and DELETE of 02 "Reconciliation rules". */
export function registerRuleMutation(app: FastifyInstance, action: RuleAction): void {
  const route = ROUTES[action];
  app.route<{ Params: { connectionId: string; ruleId?: string }; Body: RuleMutationBody }>({
    method: route.method,
    url: route.url,
    onRequest: [workspaceAuth('integrations:manage', { cli: 'allow' }), rejectPausedWrite],
    // The Idempotency-Key header is checked before the body, as on every keyed route.
    preValidation: async (request) => {
      readIdempotencyKey(request);
    },
    config: { validationError: 'invalid_rule_request', errors: RULE_MUTATION_ERRORS[action] },
    schema: { params: route.params, querystring: noQuery, body: route.body, response: { 200: receiptSchema, 201: receiptSchema } },
    handler: async (request, reply) => {
      const result = await mutateRule(app.deps, principalOf(request), ruleMutationInput(action, request));
      return reply.code(result.statusCode).send(result.body);
    },
  });
}
