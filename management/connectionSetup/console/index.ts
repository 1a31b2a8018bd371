import type { FastifyInstance } from 'fastify';
import consoleApplyConnectionSetupRoute from './applyConnectionSetup.js';
import consoleGetConnectionSetupRoute from './getConnectionSetup.js';
import consolePreviewConnectionSetupRoute from './previewConnectionSetup.js';

/** Registers the browser-session adapters of 02 "Second-mode setup". */
export default async function consoleConnectionSetupRoutes(app: FastifyInstance): Promise<void> {
  await app.register(consolePreviewConnectionSetupRoute);
  await app.register(consoleApplyConnectionSetupRoute);
  await app.register(consoleGetConnectionSetupRoute);
}
