import type { FastifyInstance } from 'fastify';

/** Registers the credentials routes. */
export default async function credentialsRoutes(_app: FastifyInstance): Promise<void> {}
