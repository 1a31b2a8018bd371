import { Redis } from 'ioredis';
import { migrateClickHouse } from '../shared/clickhouse/migrate.js';
import { migratePostgres } from '../shared/db/migrate.js';
import { TEST_ENV } from '../vitest.config.js';

/** Applies migrations to the test databases and clears the test Redis database once per run. */
export default async function setup(): Promise<void> {
  await migratePostgres(TEST_ENV.DATABASE_URL);
  await migrateClickHouse(TEST_ENV.CLICKHOUSE_URL, TEST_ENV.CLICKHOUSE_DATABASE);
  const redis = new Redis(TEST_ENV.REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
}
