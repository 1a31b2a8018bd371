import { defineConfig } from 'vitest/config';

// Tests run against the real local stack (scripts/stack.sh), in their own databases:
// PostgreSQL `svc_test`, Redis database 1, ClickHouse database `svc_test`.
// SVC_TEST_SLOT=n (1 to 9) gives a run databases of its own (`svc_test_n`, Redis database 1 + n),
// so that two runs on one machine do not share state; the PostgreSQL database must exist.
const slot = /^[1-9]$/.test(process.env.SVC_TEST_SLOT ?? '') ? Number(process.env.SVC_TEST_SLOT) : 0;
const database = slot ? `svc_test_${slot}` : 'svc_test';

export const TEST_ENV = {
  DATABASE_URL: `postgres://svc:svc@127.0.0.1:5432/${database}`,
  REDIS_URL: `redis://127.0.0.1:6379/${1 + slot}`,
  CLICKHOUSE_URL: 'http://127.0.0.1:8123',
  CLICKHOUSE_DATABASE: database,
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
