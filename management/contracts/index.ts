import type { FastifyInstance } from 'fastify';
import activateContractRoute from './activateContract.js';
import consoleContractRoutes from './console/index.js';
import getContractRoute from './getContract.js';
import listContractsRoute from './listContracts.js';
import getContractImpactRoute from './getContractImpact.js';
import registerContractRoute from './registerContract.js';
import retiredContractWriterRoute from './retiredContractWriter.js';

/** Registers the Contract API (01 "Contract API") the retired browser-session writer and the console's session routes. */
export default async function contractsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(registerContractRoute);
  await app.register(listContractsRoute);
  await app.register(getContractRoute);
  await app.register(getContractImpactRoute);
  await app.register(activateContractRoute);
  await app.register(retiredContractWriterRoute);
  await app.register(consoleContractRoutes);
}
