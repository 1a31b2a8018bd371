import '../shared/supportedNode.js'; // first: refuses an unsupported Node before anything else loads
import { createClickHouse } from '../shared/clickhouse/client.js';
import { createClock } from '../shared/clock.js';
import { createPool } from '../shared/db/pool.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { registerProcess } from '../shared/processRegistry.js';
import { connectRedis } from '../shared/redis.js';
import { announceReady, loadConfigOrExit, onShutdown } from '../shared/runtime.js';
import { startIngestServer } from './http/uwsServer.js';

const config = loadConfigOrExit();
const pool = createPool(config.databaseUrl, 4);
const redis = await connectRedis(config.redisUrl);
const clickhouse = createClickHouse(config.clickhouseUrl, config.clickhouseDatabase);
const clock = createClock(config.enableTestClock, redis);
const registration = await registerProcess(redis, { kind: 'ingest', testClock: config.enableTestClock });
const logError =
  config.logLevel === 'silent'
    ? undefined
    : (message: string, error: unknown) => {
        process.stderr.write(
          `${new Date().toISOString()} ${message}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        );
      };
const server = await startIngestServer(
  { config, pool, redis, clickhouse, clock, metrics: createMetricsRegistry('ingest'), ...(logError ? { logError } : {}) },
  config.ingest.host,
  config.ingest.port,
);
announceReady('ingest edge', config.ingest.host, server.port);
onShutdown(async () => {
  // Stop accepting, answer what is in progress, ship what the log holds, then close the stores.
  await server.close();
  await registration.stop();
  await clickhouse.close();
  await pool.end();
  redis.disconnect();
});
