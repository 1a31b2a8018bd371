import type { FastifyInstance } from 'fastify';
import confirmConnectionDeletion from './confirmConnectionDeletion.js';
import confirmIntegrationDeletion from './confirmIntegrationDeletion.js';
import getDeletionOperation from './getDeletionOperation.js';
import previewConnectionDeletion from './previewConnectionDeletion.js';
import previewIntegrationDeletion from './previewIntegrationDeletion.js';

/**
 * Registers the reviewed deletion of an Integration and of one of its connections (03
 * "Integration deletion", 01 "Other reads"). Who may call them is decided in deletionAuth.ts.
 */
export default async function deletionRoutes(app: FastifyInstance): Promise<void> {
  await app.register(previewIntegrationDeletion);
  await app.register(confirmIntegrationDeletion);
  await app.register(previewConnectionDeletion);
  await app.register(confirmConnectionDeletion);
  await app.register(getDeletionOperation);
}
