import type { FastifyInstance } from 'fastify';
import consoleApplyRepairDecisionRoute from './applyRepairDecision.js';
import consoleExportRepairProposalRoute from './exportRepairProposal.js';
import consoleGetRepairOperationRoute from './getRepairOperation.js';
import consolePreviewRepairDecisionRoute from './previewRepairDecision.js';

/** Registers the console's decision preview, apply, operation read and export (browser-session adapters of 03 Reviewed repairs). */
export default async function consoleRepairDecisionRoutes(app: FastifyInstance): Promise<void> {
  await app.register(consolePreviewRepairDecisionRoute);
  await app.register(consoleApplyRepairDecisionRoute);
  await app.register(consoleGetRepairOperationRoute);
  await app.register(consoleExportRepairProposalRoute);
}
