import type { FastifyInstance } from 'fastify';
import { revokeCliToken, type RevocationRequest } from './cliTokens.js';
import { revokeBody, revokeResponse } from './schemas.js';

/**
 * POST /oauth/revoke (RFC 7009; 00-decisions §3), form or JSON `token`, optional
 * `token_type_hint`, `client_id` → 200 `{}` for every well-formed request, a token that is
 * unknown or already revoked included (RFC 7009 §2.2). A refresh token revokes its whole grant.
 */
export default function revokeTokenRoute(app: FastifyInstance): void {
  app.post<{ Body: RevocationRequest }>(
    '/oauth/revoke',
    {
      config: { validationError: 'invalid_request', errors: ['invalid_client'] },
      schema: { body: revokeBody, response: { 200: revokeResponse } },
    },
    async (request, reply) => {
      await revokeCliToken(app.deps, request.body);
      return reply.send({});
    },
  );
}
