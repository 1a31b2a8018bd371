import type { FastifyInstance } from 'fastify';
import { registerExpectedOutcomeMutation } from './expectedOutcomeMutationRoute.js';

/** POST /workspaces/{workspaceSlug}/integrations/{connectionId}/expected-outcomes (02): 201, 200 on an identical retry. */
export default async function createExpectedOutcomeRoute(app: FastifyInstance): Promise<void> {
  registerExpectedOutcomeMutation(app, 'create');
}
