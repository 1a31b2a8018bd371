import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { refreshCliTokens } from './cliTokens.js';
import { exchangeDeviceCode } from './deviceGrant.js';
import { requireOAuthClient } from './rules.js';
import { tokenBody, tokenResponse } from './schemas.js';

const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

interface Body {
  grant_type?: string;
  client_id?: string;
  device_code?: string;
  refresh_token?: string;
  scope?: string;
}

/**
 * POST /oauth/token (RFC 6749 §5, RFC 8628 §3.4; 00-decisions §3), form or JSON: the device code
 * grant and the refresh token grant → 200 `{access_token, token_type: "Bearer", expires_in: 900,
 * refresh_token, scope}`; errors are RFC 6749 §5.2 `{error}` bodies. `Cache-Control: no-store`
 * comes from plugins/noStore.ts; `Pragma: no-cache` as RFC 6749 §5.1 also asks.
 */
export default function exchangeTokenRoute(app: FastifyInstance): void {
  app.post<{ Body: Body }>(
    '/oauth/token',
    {
      config: {
        validationError: 'invalid_request',
        errors: [
          'invalid_client',
          'unsupported_grant_type',
          'invalid_grant',
          'invalid_scope',
          'authorization_pending',
          'slow_down',
          'expired_token',
          'access_denied',
        ],
      },
      schema: { body: tokenBody, response: { 200: tokenResponse } },
    },
    async (request, reply) => {
      reply.header('Pragma', 'no-cache');
      const body = request.body;
      if (body.grant_type === undefined) throw new AppError('invalid_request');
      requireOAuthClient(body.client_id);
      if (body.grant_type === DEVICE_CODE_GRANT) return reply.send(await exchangeDeviceCode(app.deps, body));
      if (body.grant_type === 'refresh_token') return reply.send(await refreshCliTokens(app.deps, body));
      throw new AppError('unsupported_grant_type');
    },
  );
}
