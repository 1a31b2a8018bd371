import type { FastifyInstance } from 'fastify';
import decideDeviceAuthorizationRoute from './decideDeviceAuthorization.js';
import exchangeTokenRoute from './exchangeToken.js';
import getDeviceAuthorizationRoute from './getDeviceAuthorization.js';
import requestDeviceCodeRoute from './requestDeviceCode.js';
import revokeTokenRoute from './revokeToken.js';

/**
 * The account CLI's OAuth 2.0 device grant (00-decisions §3, RFC 8628), outside `/v1` and without
 * API keys: the CLI's endpoints (device code, token, revoke) and the console's consent read and
 * decision (session). Choices: docs/decisions/cli-oauth.md.
 */
export default async function oauthRoutes(app: FastifyInstance): Promise<void> {
  // The CLI's endpoints have no authentication hook to refresh the test clock: done here (encapsulated).
  app.addHook('onRequest', async () => {
    await app.deps.clock.sync();
  });
  requestDeviceCodeRoute(app);
  getDeviceAuthorizationRoute(app);
  decideDeviceAuthorizationRoute(app);
  exchangeTokenRoute(app);
  revokeTokenRoute(app);
}
