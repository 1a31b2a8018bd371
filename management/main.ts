import '../shared/supportedNode.js'; // first: refuses an unsupported Node before anything else loads
import type { AddressInfo } from 'node:net';
import { createClock } from '../shared/clock.js';
import { createPool } from '../shared/db/pool.js';
import { registerProcess } from '../shared/processRegistry.js';
import { connectRedis } from '../shared/redis.js';
import { announceReady, loadConfigOrExit, onShutdown } from '../shared/runtime.js';
import { buildApp } from './app.js';

const config = loadConfigOrExit();
const pool = createPool(config.databaseUrl);
const redis = await connectRedis(config.redisUrl);
const registration = await registerProcess(redis, { kind: 'management', testClock: config.enableTestClock });
const app = await buildApp({ config, pool, redis, clock: createClock(config.enableTestClock, redis) }, { logger: true });
await app.listen({ host: config.management.host, port: config.management.port });
announceReady('management plane', config.management.host, (app.server.address() as AddressInfo).port);
onShutdown(async () => {
  await app.close();
  await registration.stop();
  await pool.end();
  redis.disconnect();
});
