import type { FastifyInstance } from 'fastify';
import { registerRuleMutation } from './ruleMutationRoute.js';

/** POST /v1/connections/{connectionId}/reconciliation-rules (02): 201 receipt. */
export default async function createRuleRoute(app: FastifyInstance): Promise<void> {
  registerRuleMutation(app, 'create');
}
