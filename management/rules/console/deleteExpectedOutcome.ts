import type { FastifyInstance } from 'fastify';
import { registerExpectedOutcomeMutation } from './expectedOutcomeMutationRoute.js';

/** DELETE /workspaces/{workspaceSlug}/integrations/{connectionId}/expected-outcomes/{ruleId} (02): 200 with the removed rule. */
export default async function deleteExpectedOutcomeRoute(app: FastifyInstance): Promise<void> {
  registerExpectedOutcomeMutation(app, 'delete');
}
