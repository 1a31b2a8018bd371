import type { FastifyInstance } from 'fastify';
import getAccountUsageRoute from './getAccountUsage.js';
import listBillingAccountsRoute from './listBillingAccounts.js';

/** Billing account console routes (01): browser session of an e-mail-verified user. */
export default async function billingRoutes(app: FastifyInstance): Promise<void> {
  listBillingAccountsRoute(app);
  getAccountUsageRoute(app);
}
