import type { FastifyInstance } from 'fastify';
import applyOperationRoute from './applyOperation.js';
import consoleConfigurationRoutes from './console/index.js';
import getOperationRoute from './getOperation.js';
import previewCompensationRoute from './previewCompensation.js';
import previewCopyRoute from './previewCopy.js';

/** Registers 02 "Configuration copy and compensation (existing destination)" for workspace API keys, and their console adapters. */
export default async function configurationRoutes(app: FastifyInstance): Promise<void> {
  await app.register(previewCopyRoute);
  await app.register(previewCompensationRoute);
  await app.register(applyOperationRoute);
  await app.register(getOperationRoute);
  await app.register(consoleConfigurationRoutes);
}
