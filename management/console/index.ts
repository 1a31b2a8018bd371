import type { FastifyInstance } from 'fastify';
import accountPages from './accountPages.js';
import apiKeysPage from './apiKeysPage.js';
import { loadAssets } from './assets.js';
import contractsPageRoutes from './contractsPage.js';
import copyPages from './copyPage.js';
import devicePageRoute from './devicePage.js';
import getAssetRoutes from './getAsset.js';
import incidentsPages from './incidentsPage.js';
import integrationsPage from './integrationsPage.js';
import rulesPageRoute from './rulesPage.js';
import repairsPages from './repairsPage.js';
import setupPages from './setupPage.js';
import { registerConsoleSecurityHeaders, registerServerTiming } from './securityHeaders.js';
import usagePages from './usagePage.js';

/**
 * The console's pages and their static files: server-rendered views over the JSON routes and
 * services (STYLE: console), each page's forms posting to a route with a catalogue error table.
 * Encapsulated, so that their security headers (securityHeaders.ts) are theirs alone.
 */
export default async function consoleRoutes(app: FastifyInstance): Promise<void> {
  registerConsoleSecurityHeaders(app);
  registerServerTiming(app);
  const assets = await loadAssets();
  getAssetRoutes(app, assets);
  devicePageRoute(app);
  contractsPageRoutes(app);
  rulesPageRoute(app);
  accountPages(app);
  apiKeysPage(app);
  integrationsPage(app);
  incidentsPages(app);
  repairsPages(app);
  usagePages(app);
  setupPages(app);
  copyPages(app);
}
