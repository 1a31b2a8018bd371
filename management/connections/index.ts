import type { FastifyInstance } from 'fastify';
import getConnectionRoute from './getConnection.js';
import getConnectionCoverageRoute from './getConnectionCoverage.js';
import getConnectionAnalyticsRoute from './getConnectionAnalytics.js';

/** Registers the connection routes. */
export default async function connectionsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(getConnectionRoute);
  await app.register(getConnectionCoverageRoute);
  await app.register(getConnectionAnalyticsRoute);
}
