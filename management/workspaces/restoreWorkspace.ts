import type { FastifyInstance } from 'fastify';
import { lifecycleRoute } from './lifecycleRoutes.js';
import { restoreWorkspace } from './workspaceLifecycle.js';

/** POST /workspaces/{workspaceSlug}/restore → 200 `{workspace: {slug, status: active}}`; the Developer cap applies. */
export default function restoreWorkspaceRoute(app: FastifyInstance): void {
  lifecycleRoute(app, 'restore', restoreWorkspace);
}
