import type { FastifyInstance } from 'fastify';
import applyRepairDecisionRoute from './applyRepairDecision.js';
import exportRepairProposalRoute from './exportRepairProposal.js';
import getRepairOperationRoute from './getRepairOperation.js';
import previewRepairDecisionRoute from './previewRepairDecision.js';
import consoleRepairDecisionRoutes from './console/index.js';

/**
 * Registers the reviewed-repair operations of the CLI API that follow a proposal (03 Reviewed
 * repairs): decision preview, apply, operation read and export; and their console adapters.
 */
export default async function repairDecisionRoutes(app: FastifyInstance): Promise<void> {
  await app.register(previewRepairDecisionRoute);
  await app.register(applyRepairDecisionRoute);
  await app.register(getRepairOperationRoute);
  await app.register(exportRepairProposalRoute);
  await app.register(consoleRepairDecisionRoutes);
}
