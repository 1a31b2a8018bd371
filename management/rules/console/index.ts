import type { FastifyInstance } from 'fastify';
import createExpectedOutcomeRoute from './createExpectedOutcome.js';
import deleteExpectedOutcomeRoute from './deleteExpectedOutcome.js';
import deprecatedRuleWriterRoute from './deprecatedRuleWriter.js';
import getConsoleRuleOperationRoute from './getConsoleRuleOperation.js';
import listExpectedOutcomesRoute from './listExpectedOutcomes.js';
import updateExpectedOutcomeRoute from './updateExpectedOutcome.js';

/** Registers 02 "Console rule routes (browser session)" and the deprecated rule writer. */
export default async function consoleRulesRoutes(app: FastifyInstance): Promise<void> {
  await app.register(listExpectedOutcomesRoute);
  await app.register(createExpectedOutcomeRoute);
  await app.register(updateExpectedOutcomeRoute);
  await app.register(deleteExpectedOutcomeRoute);
  await app.register(getConsoleRuleOperationRoute);
  await app.register(deprecatedRuleWriterRoute);
}
