import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { httpMetrics } from '../../shared/metrics.js';

const PROBES = new Set(['/healthz', '/readyz', '/metrics']);
const isProbe = (request: FastifyRequest) => PROBES.has(request.routeOptions.url ?? '');

/**
 * Fastify's per-request log lines, at debug instead of info for the probes: they run every few
 * seconds, and at info they drowned the requests people make. (A route's `logLevel: 'debug'`
 * would do the opposite: it lowers that route's threshold, so its info lines still appear.)
 * A probe that fails is still logged at error.
 */
export class ProbeLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!isProbe(request)) {
      super.incomingRequest(request, reply, metadata);
      return;
    }
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error || !isProbe(request)) {
      super.requestCompleted(error, request, reply, metadata);
      return;
    }
    if (!this.isLogDisabled(request)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** `/healthz` (the process runs), `/readyz` (its stores answer) and `/metrics` (00-decisions §1). */
export function registerHealth(app: FastifyInstance, registry: Registry): void {
  const metrics = httpMetrics(registry);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  app.get('/healthz', { config: { noStore: false } }, async () => ({ status: 'ok' }));
  // ClickHouse is reported but does not decide readiness: only the evidence reads need it, and
  // they answer 503 on their own while it is down; every other route still works.
  app.get('/readyz', { config: { noStore: false } }, async (_request, reply) => {
    const { pool, redis, clickhouse } = app.deps;
    const checks = await Promise.allSettled([
      pool.query('SELECT 1'),
      redis.ping(),
      clickhouse.ping().then((r) => {
        if (!r.success) throw r.error;
      }),
    ]);
    const ready = checks[0].status === 'fulfilled' && checks[1].status === 'fulfilled';
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'unavailable',
      postgres: checks[0].status === 'fulfilled',
      redis: checks[1].status === 'fulfilled',
      clickhouse: checks[2].status === 'fulfilled',
    });
  });
  app.get('/metrics', { config: { noStore: false } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
