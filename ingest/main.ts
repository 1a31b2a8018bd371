import { createClickHouse } from '../shared/clickhouse/client.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { connectRedis } from '../shared/redis.js';
import { loadConfigOrExit, onShutdown } from '../shared/runtime.js';
import { startIngestServer } from './server.js';

const config = loadConfigOrExit();
const redis = await connectRedis(config.redisUrl);
const clickhouse = createClickHouse(config.clickhouseUrl, config.clickhouseDatabase);
const server = await startIngestServer({ redis, clickhouse, metrics: createMetricsRegistry('ingest') }, config.ingest.host, config.ingest.port);
process.stdout.write(`ingest edge listening on ${config.ingest.host}:${server.port}\n`);
onShutdown(async () => {
  server.close();
  await clickhouse.close();
  redis.disconnect();
});
