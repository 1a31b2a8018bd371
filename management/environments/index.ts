import type { FastifyInstance } from 'fastify';

/** Registers the environments routes. */
export default async function environmentsRoutes(_app: FastifyInstance): Promise<void> {}
