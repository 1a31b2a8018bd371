import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { EMPTY_BODY_SCHEMA } from '../workspaces/schemas.js';
import { logout } from './sessionService.js';
import { SESSION_COOKIE, sessionCookieOptions } from './schemas.js';

/** POST /auth/logout: revokes the current session and clears its cookie; unverified users may log out. */
export default function logoutRoute(app: FastifyInstance): void {
  app.post(
    '/auth/logout',
    {
      onRequest: [sessionAuth({ allowUnverified: true })],
      config: { validationError: 'invalid_request', errors: [] },
      schema: {
        body: EMPTY_BODY_SCHEMA,
        response: { 200: { type: 'object', required: ['loggedOut'], properties: { loggedOut: { type: 'boolean' } } } },
      },
    },
    async (request, reply) => {
      await logout(app.deps, sessionOf(request));
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(app.deps.config));
      return reply.send({ loggedOut: true });
    },
  );
}
