import type { FastifyInstance } from 'fastify';

/** Registers the session routes. */
export default async function sessionRoutes(_app: FastifyInstance): Promise<void> {}
