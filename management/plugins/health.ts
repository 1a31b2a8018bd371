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
  // ClickHouse is reported but does not decide readiness: only the evidence reads need it, and
  // they answer 503 on their own while it is down; every other route still works.
  app.get('/readyz', async (_request, reply) => {
    const { pool, redis, clickhouse } = app.deps;
    const checks = await Promise.allSettled([pool.query('SELECT 1'), redis.ping(), clickhouse.ping().then((r) => { if (!r.success) throw r.error; })]);
    const ready = checks[0].status === 'fulfilled' && checks[1].status === 'fulfilled';
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable', postgres: checks[0].status === 'fulfilled', redis: checks[1].status === 'fulfilled',
      clickhouse: checks[2].status === 'fulfilled',
    });
  });
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
}
