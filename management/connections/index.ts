import type { FastifyInstance } from 'fastify';

/** Registers the connections routes. */
export default async function connectionsRoutes(_app: FastifyInstance): Promise<void> {}
