import type { FastifyInstance } from 'fastify';
import consoleApplyOperationRoute from './applyOperation.js';
import consoleGetOperationRoute from './getOperation.js';
import consolePreviewCompensationRoute from './previewCompensation.js';
import consolePreviewCopyRoute from './previewCopy.js';

/** Registers the browser-session adapters of 02 "Configuration copy and compensation". */
export default async function consoleConfigurationRoutes(app: FastifyInstance): Promise<void> {
  await app.register(consolePreviewCopyRoute);
  await app.register(consolePreviewCompensationRoute);
  await app.register(consoleApplyOperationRoute);
  await app.register(consoleGetOperationRoute);
}
