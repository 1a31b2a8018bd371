import type { FastifyInstance } from 'fastify';
import consoleRulesRoutes from './console/index.js';
import createRuleRoute from './createRule.js';
import deleteRuleRoute from './deleteRule.js';
import getRuleRoute from './getRule.js';
import getRuleOperationRoute from './getRuleOperation.js';
import listRulesRoute from './listRules.js';
import updateRuleRoute from './updateRule.js';

/** Registers 02 "Reconciliation rules" for workspace API keys, and their console adapters. */
export default async function rulesRoutes(app: FastifyInstance): Promise<void> {
  await app.register(listRulesRoute);
  await app.register(getRuleRoute);
  await app.register(createRuleRoute);
  await app.register(updateRuleRoute);
  await app.register(deleteRuleRoute);
  await app.register(getRuleOperationRoute);
  await app.register(consoleRulesRoutes);
}
