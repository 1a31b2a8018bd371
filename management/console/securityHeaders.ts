import type { FastifyInstance } from 'fastify';

/**
 * The console pages' Content-Security-Policy: their own stylesheet, script and icon, fetches to
 * their own origin, forms posting to their own origin, no framing, no `<base>`, nothing inline and
 * nothing from elsewhere. A page that needs more says so here, for every page at once.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * On every answer of the console plugin (pages, assets and their errors alike): the policy above,
 * no MIME sniffing (an asset is only ever what its Content-Type says), and no Referer, since a
 * device page's address carries the user code.
 */
export function registerConsoleSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('Content-Security-Policy', CONSOLE_CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'no-referrer');
  });
}

/**
 * `Server-Timing: app;dur=<ms>` on every console answer: the time from the request's arrival to
 * its answer, which the browser tests read (and a person sees in the developer tools).
 */
export function registerServerTiming(app: FastifyInstance): void {
  const started = new WeakMap<object, bigint>();
  app.addHook('onRequest', async (request) => {
    started.set(request, process.hrtime.bigint());
  });
  app.addHook('onSend', async (request, reply) => {
    const start = started.get(request);
    if (start !== undefined) reply.header('Server-Timing', `app;dur=${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(1)}`);
  });
}
