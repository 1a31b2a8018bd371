import type { FastifyInstance } from 'fastify';
import { verifyEmail } from './sessionService.js';
import { userSchema } from './schemas.js';

/** POST /auth/verify-email `{token}` → 200 `{user}` with `emailVerified` true. */
export default function verifyEmailRoute(app: FastifyInstance): void {
  app.post<{ Body: { token: string } }>(
    '/auth/verify-email',
    {
      config: { validationError: 'invalid_verification_token', errors: ['invalid_verification_token'] },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['token'],
          properties: { token: { type: 'string', maxLength: 256 } },
        },
        response: { 200: { type: 'object', required: ['user'], properties: { user: userSchema } } },
      },
    },
    async (request, reply) => {
      const user = await verifyEmail(app.deps, request.body.token);
      return reply.send({ user });
    },
  );
}
