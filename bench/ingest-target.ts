// One server under test of the ingest load benchmark, in its own process so the load driver's
// CPU is not spent in its event loop:
//   node dist/bench/ingest-target.js edge|fastify|ceiling|fastify-ceiling
// `edge` is the real uWebSockets.js edge (ingest/http/uwsServer.ts, started as ingest/main.ts does),
// `fastify` the same pipeline behind Fastify (ingest/http/fastifyServer.ts), `ceiling` the bare
// uWebSockets.js reference (bench/ceiling-server.ts; its tokens come from BENCH_CEILING_TOKENS,
// a JSON object of Connection key -> ingest token), `fastify-ceiling` the same work behind Fastify
// (bench/ceiling-server.ts, the same tokens). Configuration comes from the environment
// (shared/config.ts; the driver passes the bench stores and raised limits), the port from
// INGEST_PORT (0 = any free port). Prints one line `{"ready":true,"port":N}` on stdout once it
// listens; SIGTERM/SIGINT stop it gracefully (the edges ship what their logs hold).

import { createClickHouse } from '../shared/clickhouse/client.js';
import { createClock } from '../shared/clock.js';
import { createPool } from '../shared/db/pool.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { connectRedis } from '../shared/redis.js';
import { loadConfigOrExit } from '../shared/runtime.js';
import { startIngestServer } from '../ingest/http/uwsServer.js';
import { startFastifyIngestServer } from '../ingest/http/fastifyServer.js';
import { startCeilingServer, startFastifyCeilingServer } from './ceiling-server.js';
import { tokenKey } from './ingest-common.js';

const target = process.argv[2];
const config = loadConfigOrExit();
const ready = (port: number) => process.stdout.write(`${JSON.stringify({ ready: true, port })}\n`);

function onStop(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  // The driver died without signalling: do not linger.
  process.on('disconnect', handler);
}

if (target === 'ceiling' || target === 'fastify-ceiling') {
  const tokens = new Map(
    Object.entries(JSON.parse(process.env.BENCH_CEILING_TOKENS ?? '{}') as Record<string, string>).map(
      ([connectionKey, token]) => [connectionKey, tokenKey(token)] as const,
    ),
  );
  const start = target === 'ceiling' ? startCeilingServer : startFastifyCeilingServer;
  const server = await start(tokens, config.ingest.host, config.ingest.port);
  ready(server.port);
  onStop(async () => server.close());
} else if (target === 'edge' || target === 'fastify') {
  const pool = createPool(config.databaseUrl, 4);
  const redis = await connectRedis(config.redisUrl);
  const clickhouse = createClickHouse(config.clickhouseUrl, config.clickhouseDatabase);
  const clock = createClock(config.enableTestClock, redis);
  const logError = (message: string, error: unknown) => {
    process.stderr.write(
      `${new Date().toISOString()} ${target} ${message}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  };
  const deps = { config, pool, redis, clickhouse, clock, metrics: createMetricsRegistry(`ingest-bench-${target}`), logError };
  const start = target === 'edge' ? startIngestServer : startFastifyIngestServer;
  const server = await start(deps, config.ingest.host, config.ingest.port);
  ready(server.port);
  onStop(async () => {
    await server.close();
    await clickhouse.close();
    await pool.end();
    redis.disconnect();
  });
} else {
  process.stderr.write('usage: node dist/bench/ingest-target.js edge|fastify|ceiling|fastify-ceiling\n');
  process.exit(2);
}
