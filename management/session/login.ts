import type { FastifyInstance } from 'fastify';
import { rejectForeignOrigin } from '../auth/sessionAuth.js';
import { login } from './sessionService.js';
import { SESSION_COOKIE, sessionCookieOptions, userSchema } from './schemas.js';

interface Body {
  email: string;
  password: string;
}

/**
 * POST /auth/login → 200 `{user, csrfToken}` and the HttpOnly session cookie (00-decisions §2, §3).
 * The session token itself never appears in the body.
 */
export default function loginRoute(app: FastifyInstance): void {
  app.post<{ Body: Body }>(
    '/auth/login',
    {
      onRequest: [rejectForeignOrigin],
      config: { validationError: 'invalid_request', errors: ['unauthenticated', 'rate_limited'] },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['email', 'password'],
          properties: {
            email: { type: 'string', maxLength: 320 },
            password: { type: 'string', maxLength: 1024 },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['user', 'csrfToken'],
            properties: { user: userSchema, csrfToken: { type: 'string' } },
          },
        },
      },
    },
    async (request, reply) => {
      const result = await login(app.deps, request.body, request.ip);
      reply.setCookie(SESSION_COOKIE, result.sessionToken, {
        ...sessionCookieOptions(app.deps.config),
        maxAge: app.deps.config.sessionTtlSeconds,
      });
      return reply.send({ user: result.user, csrfToken: result.csrfToken });
    },
  );
}
