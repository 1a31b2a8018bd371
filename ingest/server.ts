import uWS from 'uWebSockets.js';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';

export interface IngestServerDeps {
  redis: Redis;
  clickhouse: ClickHouseClient;
  metrics: Registry;
}

export interface RunningServer {
  port: number;
  close(): void;
}

function json(res: uWS.HttpResponse, status: string, body: unknown): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(JSON.stringify(body));
  });
}

/**
 * The ingest edge's uWebSockets.js adapter (00-decisions §1). Serves `/healthz`, `/readyz`
 * and `/metrics`; the ingestion pipeline routes are added by the ingest issue.
 */
export function startIngestServer(deps: IngestServerDeps, host: string, port: number): Promise<RunningServer> {
  const app = uWS.App();
  app.get('/healthz', (res) => json(res, '200 OK', { status: 'ok' }));
  app.get('/readyz', (res) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    Promise.allSettled([deps.redis.ping(), deps.clickhouse.ping()]).then(([redis, clickhouse]) => {
      if (aborted) return;
      const clickhouseUp = clickhouse.status === 'fulfilled' && clickhouse.value.success;
      const ready = redis.status === 'fulfilled' && clickhouseUp;
      json(res, ready ? '200 OK' : '503 Service Unavailable', { status: ready ? 'ready' : 'unavailable', redis: redis.status === 'fulfilled', clickhouse: clickhouseUp });
    });
  });
  app.get('/metrics', (res) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    deps.metrics.metrics().then((text) => {
      if (aborted) return;
      res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', deps.metrics.contentType).end(text));
    });
  });
  app.any('/*', (res) => json(res, '404 Not Found', { error: 'not_found' }));
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) return reject(new Error(`ingest edge could not listen on ${host}:${port}`));
      resolve({ port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) });
    });
  });
}
