import type { FastifyInstance } from 'fastify';

/** Registers the integrations routes. */
export default async function integrationsRoutes(_app: FastifyInstance): Promise<void> {}
