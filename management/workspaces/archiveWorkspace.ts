import type { FastifyInstance } from 'fastify';
import { lifecycleRoute } from './lifecycleRoutes.js';
import { archiveWorkspace } from './workspaceLifecycle.js';

/** POST /workspaces/{workspaceSlug}/archive → 200 `{workspace: {slug, status: archived}}`. */
export default function archiveWorkspaceRoute(app: FastifyInstance): void {
  lifecycleRoute(app, 'archive', archiveWorkspace);
}
