import { defineConfig } from 'vitest/config';

// Tests run against the real local stack (scripts/stack.sh), in their own databases:
// PostgreSQL `svc_test`, Redis database 1, ClickHouse database `svc_test`.
export const TEST_ENV = {
  DATABASE_URL: 'postgres://svc:svc@127.0.0.1:5432/svc_test',
  REDIS_URL: 'redis://127.0.0.1:6379/1',
  CLICKHOUSE_URL: 'http://127.0.0.1:8123',
  CLICKHOUSE_DATABASE: 'svc_test',
  ENABLE_TEST_CLOCK: '1',
  LOG_LEVEL: 'silent',
};

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    env: TEST_ENV,
    globalSetup: ['test/globalSetup.ts'],
    // Files share one stack and global switches (maintenance pause, test clock): run them one by one.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
