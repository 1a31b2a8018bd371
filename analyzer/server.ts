import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { ClickHouseClient } from '@clickhouse/client';

export interface AnalyzerHealthDeps {
  pool: pg.Pool;
  redis: Redis;
  clickhouse: ClickHouseClient;
  metrics: Registry;
}

/** The analyzer's health and metrics listener (00-decisions §1: health and metrics only). */
export function startAnalyzerHealth(deps: AnalyzerHealthDeps, host: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    const send = (status: number, body: string, type = 'application/json') => {
      response.writeHead(status, { 'Content-Type': type }).end(body);
    };
    if (request.method !== 'GET') return send(404, '{"error":"not_found"}');
    if (request.url === '/healthz') return send(200, '{"status":"ok"}');
    if (request.url === '/readyz') {
      Promise.allSettled([
        deps.pool.query('SELECT 1'),
        deps.redis.ping(),
        deps.clickhouse.ping().then((r) => {
          if (!r.success) throw r.error;
        }),
      ]).then(([pg, redis, clickhouse]) => {
        const ready = pg.status === 'fulfilled' && redis.status === 'fulfilled' && clickhouse.status === 'fulfilled';
        send(
          ready ? 200 : 503,
          JSON.stringify({
            status: ready ? 'ready' : 'unavailable',
            postgres: pg.status === 'fulfilled',
            redis: redis.status === 'fulfilled',
            clickhouse: clickhouse.status === 'fulfilled',
          }),
        );
      });
      return;
    }
    if (request.url === '/metrics') {
      deps.metrics.metrics().then((text) => send(200, text, deps.metrics.contentType));
      return;
    }
    send(404, '{"error":"not_found"}');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
