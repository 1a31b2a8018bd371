import type { FastifyInstance } from 'fastify';
import getConnectionRoute from './getConnection.js';

/** Registers the connection routes. */
export default async function connectionsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(getConnectionRoute);
}
