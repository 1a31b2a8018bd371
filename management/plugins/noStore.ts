import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `false`: the route's own answers (status below 400) leave `Cache-Control` to the route: the
     * health probes and metrics (none) and the API documentation (`no-cache`, apiDocs/index.ts).
     */
    noStore?: false;
  }
}

/**
 * The one writer of `Cache-Control: no-store`, on every answer of the management plane: 01 asks
 * it of receipts, setup, credentials and single reads, 02 of all its responses, docs/decisions/ (api-conventions.md)
 * of every console, inventory and evidence answer. Errors carry it on every route (the catalogue
 * answers, 404s and the framework's own errors included): an error answers one request at one
 * moment, so no cache may replay it. Registered before every route, so every route inherits it.
 * Fastify runs no hooks for the URLs its router refuses: plugins/clientErrors.ts sets it on those.
 */
export function registerNoStore(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.routeOptions.config?.noStore === false && reply.statusCode < 400) return;
    reply.header('Cache-Control', 'no-store');
  });
}
