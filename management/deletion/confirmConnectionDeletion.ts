import type { FastifyInstance } from 'fastify';
import { registerDeletionConfirmation } from './deletionRoutes.js';

/** POST /v1/integrations/{workspaceIntegrationId}/connections/{connectionId}/deletion (03 "Integration deletion"). */
export default async function confirmConnectionDeletion(app: FastifyInstance): Promise<void> {
  registerDeletionConfirmation(app, 'connection');
}
