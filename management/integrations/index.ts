import type { FastifyInstance } from 'fastify';
import consoleCreateIntegrationRoute from './consoleCreateIntegration.js';
import createIntegrationRoute from './createIntegration.js';
import getIntegrationRoute from './getIntegration.js';
import getIntegrationOperationRoute from './getIntegrationOperation.js';
import listIntegrationsRoute from './listIntegrations.js';

/** Registers the Integration routes (01 Integration creation, inventory and single read), and the console's creation. */
export default async function integrationsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(createIntegrationRoute);
  await app.register(consoleCreateIntegrationRoute);
  await app.register(getIntegrationOperationRoute);
  await app.register(listIntegrationsRoute);
  await app.register(getIntegrationRoute);
}
