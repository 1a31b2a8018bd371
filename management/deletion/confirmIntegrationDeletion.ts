import type { FastifyInstance } from 'fastify';
import { registerDeletionConfirmation } from './deletionRoutes.js';

/** POST /v1/integrations/{workspaceIntegrationId}/deletion (03 "Integration deletion"). */
export default async function confirmIntegrationDeletion(app: FastifyInstance): Promise<void> {
  registerDeletionConfirmation(app, 'integration');
}
