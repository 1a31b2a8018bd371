import '../shared/supportedNode.js'; // first: refuses an unsupported Node before anything else loads
import type { AddressInfo } from 'node:net';
import { createClock } from '../shared/clock.js';
import { createPool } from '../shared/db/pool.js';
import { registerProcess } from '../shared/processRegistry.js';
import { connectRedis } from '../shared/redis.js';
import { announceReady, loadConfigOrExit, onShutdown } from '../shared/runtime.js';
import { buildApp } from './app.js';

const config = loadConfigOrExit();
/** PostgreSQL connections opened at start and kept (a console page reads on up to two at once). */
const WARM_CONNECTIONS = 2;
const pool = createPool(config.databaseUrl, 10, { min: WARM_CONNECTIONS });
const redis = await connectRedis(config.redisUrl);
const registration = await registerProcess(redis, { kind: 'management', testClock: config.enableTestClock });
const app = await buildApp({ config, pool, redis, clock: createClock(config.enableTestClock, redis) }, { logger: true });
// The stores' first connections are opened before the first request, not during it (the first
// console page of a run paid them: PostgreSQL connections and the ClickHouse client's socket).
// A store that is down now is reported by /readyz, not here.
await Promise.allSettled([
  ...Array.from({ length: WARM_CONNECTIONS }, () => pool.query('SELECT 1')),
  app.deps.clickhouse.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((result) => result.json()),
]);
await app.listen({ host: config.management.host, port: config.management.port });
announceReady('management plane', config.management.host, (app.server.address() as AddressInfo).port);
onShutdown(async () => {
  await app.close();
  await registration.stop();
  await pool.end();
  redis.disconnect();
});
