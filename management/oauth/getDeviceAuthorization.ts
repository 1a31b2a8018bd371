import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { readDeviceAuthorization } from './deviceGrant.js';
import { deviceAuthorizationQuery, deviceAuthorizationView } from './schemas.js';

/**
 * GET /oauth/device/authorization?user_code=… (console session, verified e-mail) → 200
 * `{userCode, clientId, clientName, scopes, expiresAt}`: what the consent page shows before the
 * user decides. A code naming no pending request → 400 `invalid_grant`; guessing → 429 `rate_limited`.
 */
export default function getDeviceAuthorizationRoute(app: FastifyInstance): void {
  app.get<{ Querystring: { user_code: string } }>(
    '/oauth/device/authorization',
    {
      onRequest: [sessionAuth()],
      config: { validationError: 'invalid_request', errors: ['invalid_grant', 'forbidden', 'rate_limited'] },
      schema: { querystring: deviceAuthorizationQuery, response: { 200: deviceAuthorizationView } },
    },
    async (request, reply) => reply.send(await readDeviceAuthorization(app.deps, sessionOf(request), request.query.user_code, request.ip)),
  );
}
