import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';

export interface AnalyzerHealthDeps {
  pool: pg.Pool;
  redis: Redis;
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
      Promise.allSettled([deps.pool.query('SELECT 1'), deps.redis.ping()]).then(([pg, redis]) => {
        const ready = pg.status === 'fulfilled' && redis.status === 'fulfilled';
        send(ready ? 200 : 503, JSON.stringify({ status: ready ? 'ready' : 'unavailable', postgres: pg.status === 'fulfilled', redis: redis.status === 'fulfilled' }));
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
