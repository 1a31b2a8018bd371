import type { FastifyInstance } from 'fastify';
import getUsageRoute from './getUsage.js';

/** Registers the workspace usage read (00-decisions §5). */
export default async function usageRoutes(app: FastifyInstance): Promise<void> {
  await app.register(getUsageRoute);
}
