import type { FastifyInstance } from 'fastify';
import { registerDeletionPreview } from './deletionRoutes.js';

/** POST /v1/integrations/{workspaceIntegrationId}/connections/{connectionId}/deletion-preview (03 "Integration deletion"). */
export default async function previewConnectionDeletion(app: FastifyInstance): Promise<void> {
  registerDeletionPreview(app, 'connection');
}
