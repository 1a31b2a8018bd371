import type { FastifyInstance } from 'fastify';
import { registerRuleMutation } from './ruleMutationRoute.js';

/** PATCH /v1/connections/{connectionId}/reconciliation-rules/{ruleId} (02): 200 receipt. */
export default async function updateRuleRoute(app: FastifyInstance): Promise<void> {
  registerRuleMutation(app, 'update');
}
