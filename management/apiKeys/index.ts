import type { FastifyInstance } from 'fastify';

/** Registers the apiKeys routes. */
export default async function apiKeysRoutes(_app: FastifyInstance): Promise<void> {}
