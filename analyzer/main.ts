import '../shared/supportedNode.js'; // first: refuses an unsupported Node before anything else loads
import type { AddressInfo } from 'node:net';
import { createClickHouseReader } from '../shared/clickhouse/client.js';
import { createClock } from '../shared/clock.js';
import { createPool } from '../shared/db/pool.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { registerProcess } from '../shared/processRegistry.js';
import { connectRedis } from '../shared/redis.js';
import { announceReady, loadConfigOrExit, onShutdown } from '../shared/runtime.js';
import { startAnalyzerHealth } from './server.js';
import { Analyzer } from './service.js';

const config = loadConfigOrExit();
const pool = createPool(config.databaseUrl, 4 + config.analyzer.concurrency);
const redis = await connectRedis(config.redisUrl);
const clickhouse = createClickHouseReader(config.clickhouseUrl, config.clickhouseDatabase, config.analyzer.clickhouseReads);
const metrics = createMetricsRegistry('analyzer');
const clock = createClock(config.enableTestClock, redis);
const registration = await registerProcess(redis, { kind: 'analyzer', testClock: config.enableTestClock });
const analyzer = new Analyzer({ config: config.analyzer, pool, redis, clickhouse, clock, metrics });
await analyzer.start();
const server = await startAnalyzerHealth({ pool, redis, clickhouse, metrics }, config.analyzer.host, config.analyzer.port);
announceReady('analyzer', config.analyzer.host, (server.address() as AddressInfo).port);
onShutdown(async () => {
  server.close();
  await analyzer.stop();
  await registration.stop();
  await pool.end();
  await clickhouse.close();
  redis.disconnect();
});
