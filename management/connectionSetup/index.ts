import type { FastifyInstance } from 'fastify';
import applyConnectionSetupRoute from './applyConnectionSetup.js';
import consoleConnectionSetupRoutes from './console/index.js';
import getConnectionSetupRoute from './getConnectionSetup.js';
import previewConnectionSetupRoute from './previewConnectionSetup.js';

/** Registers 02 "Second-mode setup" for workspace API keys (CLI OAuth cannot use it, 02 Authentication 5), and its console adapters. */
export default async function connectionSetupRoutes(app: FastifyInstance): Promise<void> {
  await app.register(previewConnectionSetupRoute);
  await app.register(applyConnectionSetupRoute);
  await app.register(getConnectionSetupRoute);
  await app.register(consoleConnectionSetupRoutes);
}
