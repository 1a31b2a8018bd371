import { createPool } from '../shared/db/pool.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { connectRedis } from '../shared/redis.js';
import { loadConfigOrExit, onShutdown } from '../shared/runtime.js';
import { startAnalyzerHealth } from './server.js';

// The analysis consumer (Piscina workers reading the Redis stream) arrives with the analyzer
// issue; until then the process starts, reports health and leaves queued work waiting.
const config = loadConfigOrExit();
const pool = createPool(config.databaseUrl, 4);
const redis = await connectRedis(config.redisUrl);
const server = await startAnalyzerHealth({ pool, redis, metrics: createMetricsRegistry('analyzer') }, config.analyzer.host, config.analyzer.port);
process.stdout.write(`analyzer listening on ${config.analyzer.host}:${config.analyzer.port}\n`);
onShutdown(async () => {
  server.close();
  await pool.end();
  redis.disconnect();
});
