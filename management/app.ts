import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import { createClickHouseReader } from '../shared/clickhouse/client.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { registerApiDocs } from './apiDocs/index.js';
import { ImportPool } from './contracts/importPool.js';
import type { AppDeps, Deps } from './deps.js';
import { HTTP_LAYER_OPTIONS, registerClientErrors } from './plugins/clientErrors.js';
import { registerErrorHandler } from './plugins/errorHandler.js';
import { ProbeLogController, registerHealth } from './plugins/health.js';
import { registerNoStore } from './plugins/noStore.js';
import { registerStorableStrings } from './plugins/storableStrings.js';
import apiKeysRoutes from './apiKeys/index.js';
import billingRoutes from './billing/index.js';
import cliAccountRoutes from './cliAccount/index.js';
import cliEvidenceRoutes from './cliEvidence/index.js';
import repairsRoutes from './repairs/index.js';
import connectionsRoutes from './connections/index.js';
import consoleRoutes from './console/index.js';
import connectionSetupRoutes from './connectionSetup/index.js';
import contractsRoutes from './contracts/index.js';
import credentialsRoutes from './credentials/index.js';
import deletionRoutes from './deletion/index.js';
import rulesRoutes from './rules/index.js';
import configurationRoutes from './configuration/index.js';
import environmentsRoutes from './environments/index.js';
import incidentsRoutes from './incidents/index.js';
import integrationsRoutes from './integrations/index.js';
import observationsRoutes from './observations/index.js';
import oauthRoutes from './oauth/index.js';
import repairDecisionRoutes from './repairDecisions/index.js';
import sessionRoutes from './session/index.js';
import usageRoutes from './usage/index.js';
import workspacesRoutes from './workspaces/index.js';

/** 01 Conventions: a body over 1 MiB returns 413 `request_too_large`. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildOptions {
  logger?: boolean;
  /** Sees every route as it is registered (the route-wide fuzz test enumerates them). */
  onRoute?: (route: RouteOptions) => void;
}

export async function buildApp(deps: Deps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ? { level: deps.config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] } : false,
    logController: new ProbeLogController(),
    bodyLimit: BODY_LIMIT_BYTES,
    // Strict validation: unknown fields are rejected (never silently removed) and nothing is coerced.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    ...HTTP_LAYER_OPTIONS,
  });
  // Observation reads need ClickHouse: a caller that passes no client gets the app's own, with
  // the read limits of the config, closed with the app (its one release point).
  const clickhouse =
    deps.clickhouse
    ?? createClickHouseReader(deps.config.clickhouseUrl, deps.config.clickhouseDatabase, deps.config.management.clickhouseReads);
  if (!deps.clickhouse) app.addHook('onClose', async () => clickhouse.close());
  const registry = createMetricsRegistry('management');
  const imports = new ImportPool({ registry });
  app.addHook('onClose', async () => imports.close());
  const appDeps: AppDeps = { ...deps, clickhouse, imports };
  app.decorate('deps', appDeps);
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  registerNoStore(app);
  registerErrorHandler(app);
  registerClientErrors(app);
  registerStorableStrings(app);
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: BODY_LIMIT_BYTES });
  await registerApiDocs(app);
  registerHealth(app, registry);

  await app.register(sessionRoutes);
  await app.register(oauthRoutes);
  await app.register(workspacesRoutes);
  await app.register(billingRoutes);
  await app.register(apiKeysRoutes);
  await app.register(environmentsRoutes);
  await app.register(integrationsRoutes);
  await app.register(connectionsRoutes);
  await app.register(credentialsRoutes);
  await app.register(contractsRoutes);
  await app.register(rulesRoutes);
  await app.register(configurationRoutes);
  await app.register(connectionSetupRoutes);
  await app.register(deletionRoutes);
  await app.register(observationsRoutes);
  await app.register(usageRoutes);
  await app.register(incidentsRoutes);
  await app.register(cliAccountRoutes);
  await app.register(cliEvidenceRoutes);
  await app.register(repairsRoutes);
  await app.register(repairDecisionRoutes);
  await app.register(consoleRoutes);
  return app;
}
