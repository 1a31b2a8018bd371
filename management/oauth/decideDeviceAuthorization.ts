import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { type ConsentDecision, decideDeviceAuthorization } from './deviceGrant.js';
import { consentBody, consentResponse } from './schemas.js';

/**
 * POST /oauth/device/consent `{user_code, decision: approve|deny}` (00-decisions §3): a console
 * session write (same-origin `Origin` or `X-CSRF-Token`) of a user with a verified e-mail (03
 * Account CLI OAuth 2) → 200 `{decision}`. A code naming no pending request → 400 `invalid_grant`;
 * guessing → 429 `rate_limited`.
 */
export default function decideDeviceAuthorizationRoute(app: FastifyInstance): void {
  app.post<{ Body: { user_code: string; decision: ConsentDecision } }>(
    '/oauth/device/consent',
    {
      onRequest: [sessionAuth()],
      config: { validationError: 'invalid_request', errors: ['invalid_grant', 'forbidden', 'rate_limited'] },
      schema: { body: consentBody, response: { 200: consentResponse } },
    },
    async (request, reply) => {
      const decision = await decideDeviceAuthorization(app.deps, sessionOf(request), request.body, request.ip);
      return reply.send({ decision });
    },
  );
}
