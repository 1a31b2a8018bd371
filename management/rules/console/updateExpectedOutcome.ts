import type { FastifyInstance } from 'fastify';
import { registerExpectedOutcomeMutation } from './expectedOutcomeMutationRoute.js';

/** PATCH /workspaces/{workspaceSlug}/integrations/{connectionId}/expected-outcomes/{ruleId} (02): 200. */
export default async function updateExpectedOutcomeRoute(app: FastifyInstance): Promise<void> {
  registerExpectedOutcomeMutation(app, 'update');
}
