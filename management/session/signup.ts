import type { FastifyInstance } from 'fastify';
import { rejectForeignOrigin } from '../auth/sessionAuth.js';
import { signup } from './sessionService.js';
import { userSchema } from './schemas.js';

interface Body {
  email: string;
  password: string;
  name: string;
}

/** POST /auth/signup (00-decisions §3): 201 `{user}`, unverified until the mailed token is used. */
export default function signupRoute(app: FastifyInstance): void {
  app.post<{ Body: Body }>(
    '/auth/signup',
    {
      onRequest: [rejectForeignOrigin],
      config: { validationError: 'invalid_signup', errors: ['invalid_signup', 'email_unavailable', 'rate_limited'] },
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['email', 'password', 'name'],
          properties: {
            email: { type: 'string', maxLength: 320 },
            password: { type: 'string', maxLength: 1024 },
            name: { type: 'string', maxLength: 480 },
          },
        },
        response: { 201: { type: 'object', required: ['user'], properties: { user: userSchema } } },
      },
    },
    async (request, reply) => {
      const user = await signup(app.deps, request.body, request.ip);
      return reply.code(201).send({ user });
    },
  );
}
