import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { httpMetrics } from '../../shared/metrics.js';

/** `/healthz` (the process runs), `/readyz` (its stores answer) and `/metrics` (00-decisions §1). */
export function registerHealth(app: FastifyInstance, registry: Registry): void {
  const metrics = httpMetrics(registry);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const { pool, redis } = app.deps;
    const checks = await Promise.allSettled([pool.query('SELECT 1'), redis.ping()]);
    const ready = checks.every((check) => check.status === 'fulfilled');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres: checks[0].status === 'fulfilled', redis: checks[1].status === 'fulfilled' });
  });
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
}
