import type { FastifyInstance } from 'fastify';
import consoleRequestRepairProposalRoute from './requestRepairProposal.js';

/** Registers the console's repair request (a browser-session adapter of 03 Reviewed repairs). */
export default async function consoleRepairRoutes(app: FastifyInstance): Promise<void> {
  await app.register(consoleRequestRepairProposalRoute);
}
