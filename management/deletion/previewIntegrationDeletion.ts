import type { FastifyInstance } from 'fastify';
import { registerDeletionPreview } from './deletionRoutes.js';

/** POST /v1/integrations/{workspaceIntegrationId}/deletion-preview (03 "Integration deletion"). */
export default async function previewIntegrationDeletion(app: FastifyInstance): Promise<void> {
  registerDeletionPreview(app, 'integration');
}
