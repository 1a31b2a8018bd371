import type { FastifyInstance } from 'fastify';

/** Registers the workspaces routes. */
export default async function workspacesRoutes(_app: FastifyInstance): Promise<void> {}
