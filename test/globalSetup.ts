import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { migrateClickHouse } from '../shared/clickhouse/migrate.js';
import { migratePostgres } from '../shared/db/migrate.js';
import { connectRedis, isCluster, masterNodes } from '../shared/redis.js';
import { REDIS_CLUSTER_BASE_PORT, TEST_ENV } from '../vitest.config.js';

const MIGRATIONS = Symbol.for('svc.test.migrations');

/**
 * Once per project of the run: migrates the test databases (once for both projects: they share
 * them), starts the slot's Redis Cluster for the cluster project, and empties the project's Redis.
 */
export default async function setup(project: TestProject): Promise<void> {
  const env: Record<string, string | undefined> = { ...TEST_ENV, ...project.config.env };
  const shared = globalThis as { [MIGRATIONS]?: Promise<void> };
  shared[MIGRATIONS] ??= migrate();
  await shared[MIGRATIONS];
  if (env.REDIS_CLUSTER_NODES) await startCluster(REDIS_CLUSTER_BASE_PORT);
  const redis = await connectRedis(env.REDIS_URL ?? TEST_ENV.REDIS_URL);
  try {
    // The single server holds other slots' databases: only this one is flushed there.
    await Promise.all(masterNodes(redis).map((node) => (isCluster(redis) ? node.flushall() : node.flushdb())));
  } finally {
    redis.disconnect();
  }
}

async function migrate(): Promise<void> {
  await migratePostgres(TEST_ENV.DATABASE_URL);
  await migrateClickHouse(TEST_ENV.CLICKHOUSE_URL, TEST_ENV.CLICKHOUSE_DATABASE);
}

async function startCluster(basePort: number): Promise<void> {
  try {
    await promisify(execFile)('bash', ['scripts/redis-cluster.sh', 'start', String(basePort)], { cwd: new URL('..', import.meta.url) });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`scripts/redis-cluster.sh start ${basePort} failed:\n${stdout}${stderr}`);
  }
}
