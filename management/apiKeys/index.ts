import type { FastifyInstance } from 'fastify';
import createApiKeyRoute from './createApiKey.js';
import deleteApiKeyRoute from './deleteApiKey.js';
import listApiKeysRoute from './listApiKeys.js';

/** Workspace API key management (00-decisions §3): console session, owner or admin. */
export default async function apiKeysRoutes(app: FastifyInstance): Promise<void> {
  listApiKeysRoute(app);
  createApiKeyRoute(app);
  deleteApiKeyRoute(app);
}
