import type { FastifyInstance } from 'fastify';
import { registerRuleMutation } from './ruleMutationRoute.js';

/** DELETE /v1/connections/{connectionId}/reconciliation-rules/{ruleId} (02): 200 receipt holding the removed rule. */
export default async function deleteRuleRoute(app: FastifyInstance): Promise<void> {
  registerRuleMutation(app, 'delete');
}
