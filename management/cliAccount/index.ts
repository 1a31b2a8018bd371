import type { FastifyInstance } from 'fastify';
import deleteCurrentSessionRoute from './deleteCurrentSession.js';
import getMeRoute from './getMe.js';
import listSessionsRoute from './listSessions.js';
import listWorkspacesRoute from './listWorkspaces.js';
import revokeSessionRoute from './revokeSession.js';

/** Registers the CLI account routes: identity, workspaces and sessions (03 Account routes). */
export default async function cliAccountRoutes(app: FastifyInstance): Promise<void> {
  await app.register(getMeRoute);
  await app.register(listWorkspacesRoute);
  await app.register(listSessionsRoute);
  await app.register(revokeSessionRoute);
  await app.register(deleteCurrentSessionRoute);
}
