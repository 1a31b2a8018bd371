import type { FastifyInstance } from 'fastify';
import loginRoute from './login.js';
import logoutRoute from './logout.js';
import signupRoute from './signup.js';
import verifyEmailRoute from './verifyEmail.js';

/**
 * Console auth (00-decisions §3). Signup, verification and login are not session-authenticated,
 * so neither CSRF nor the maintenance pause (which applies to authenticated writes) touches them.
 */
export default async function sessionRoutes(app: FastifyInstance): Promise<void> {
  // These routes have no authentication hook to refresh the test clock, so do it here (encapsulated).
  app.addHook('onRequest', async () => {
    await app.deps.clock.sync();
  });
  signupRoute(app);
  verifyEmailRoute(app);
  loginRoute(app);
  logoutRoute(app);
}
