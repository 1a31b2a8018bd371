import type { FastifyInstance } from 'fastify';
import activateWorkspaceRoute from './activateWorkspace.js';
import archiveWorkspaceRoute from './archiveWorkspace.js';
import createWorkspaceRoute from './createWorkspace.js';
import listWorkspacesRoute from './listWorkspaces.js';
import restoreWorkspaceRoute from './restoreWorkspace.js';

/** Workspace console routes (01): browser session of an e-mail-verified user, never an API key. */
export default async function workspacesRoutes(app: FastifyInstance): Promise<void> {
  listWorkspacesRoute(app);
  createWorkspaceRoute(app);
  activateWorkspaceRoute(app);
  archiveWorkspaceRoute(app);
  restoreWorkspaceRoute(app);
}
