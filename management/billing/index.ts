import type { FastifyInstance } from 'fastify';

/** Registers the billing routes. */
export default async function billingRoutes(_app: FastifyInstance): Promise<void> {}
