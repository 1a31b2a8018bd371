import type { FastifyInstance } from 'fastify';
import { requestDeviceAuthorization } from './deviceGrant.js';
import { deviceAuthorizationResponse, deviceCodeBody } from './schemas.js';

/**
 * POST /oauth/device/code (RFC 8628 §3.1, 00-decisions §3), form or JSON `client_id`, `scope` →
 * 200 `{device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval}`.
 * No authentication: the CLI is a public client. Per client address, at most
 * OAUTH_DEVICE_CODES_PER_ADDRESS_PER_HOUR requests an hour (429 `rate_limited`).
 */
export default function requestDeviceCodeRoute(app: FastifyInstance): void {
  app.post<{ Body: { client_id?: string; scope?: string; connection_id?: string } }>(
    '/oauth/device/code',
    {
      config: { validationError: 'invalid_request', errors: ['invalid_client', 'invalid_scope', 'rate_limited'] },
      schema: { body: deviceCodeBody, response: { 200: deviceAuthorizationResponse } },
    },
    async (request, reply) => reply.send(await requestDeviceAuthorization(app.deps, request.body, request.ip)),
  );
}
