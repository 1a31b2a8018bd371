import type { FastifyInstance } from 'fastify';
import getProposalByKeyRoute from './getProposalByKey.js';
import getRepairProposalRoute from './getRepairProposal.js';
import getReplayDatasetRoute from './getReplayDataset.js';
import getReplayRunRoute from './getReplayRun.js';
import listRepairProposalsRoute from './listRepairProposals.js';
import listReplayDatasetsRoute from './listReplayDatasets.js';
import requestRepairProposalRoute from './requestRepairProposal.js';
import consoleRepairRoutes from './console/index.js';

/**
 * Registers the repair request and the repair evidence reads (03 Reviewed repairs, Evidence reads;
 * 00-decisions §5), and the console's request (a browser-session adapter).
 */
export default async function repairsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(requestRepairProposalRoute);
  await app.register(listRepairProposalsRoute);
  await app.register(getRepairProposalRoute);
  await app.register(listReplayDatasetsRoute);
  await app.register(getReplayDatasetRoute);
  await app.register(getReplayRunRoute);
  await app.register(getProposalByKeyRoute);
  await app.register(consoleRepairRoutes);
}
