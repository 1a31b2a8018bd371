import type { FastifyInstance } from 'fastify';
import listEnvironmentsRoute from './listEnvironments.js';

/** Registers the environments routes. */
export default async function environmentsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(listEnvironmentsRoute);
}
