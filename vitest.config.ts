import { configDefaults, defineConfig } from 'vitest/config';

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
  // Tests register and activate a hundred versions in one workspace within seconds (copy of 100
  // contracts, the contract API suite): far past the production budget of 60 a minute, which
  // test/tenantLimits.test.ts checks with small values of its own.
  CONTRACT_REGISTRATIONS_PER_MIN: '100000',
  CONTRACT_ACTIVATIONS_PER_MIN: '100000',
  // Tests open device logins from loopback by the hundred (the OAuth suites, the route fuzz): far
  // past the production budget of 30 an hour per address, which test/oauthDeviceGrant.test.ts
  // checks with a small value of its own.
  OAUTH_DEVICE_CODES_PER_ADDRESS_PER_HOUR: '100000',
};

/**
 * The project `redis-cluster` runs on a three-master Redis Cluster of its own slot, started by the
 * global setup (scripts/redis-cluster.sh): a cluster has only database 0, so each slot gets its
 * own cluster, on ports 7000 + 10 * slot to + 2.
 */
export const REDIS_CLUSTER_BASE_PORT = 7000 + 10 * slot;
const clusterNodes = [0, 1, 2].map((i) => `127.0.0.1:${REDIS_CLUSTER_BASE_PORT + i}`).join(',');

export const REDIS_CLUSTER_TEST_ENV = {
  ...TEST_ENV,
  REDIS_URL: `redis+cluster://${clusterNodes}`,
  REDIS_CLUSTER_NODES: clusterNodes,
};

/** The test files that run against the Redis Cluster too (after the single-Redis run). */
export const REDIS_CLUSTER_TESTS = [
  'test/redisCluster.test.ts',
  // The ingest conformance: every admission, de-duplication, limit, log and crash case on the cluster too.
  'test/ingest.test.ts',
  'test/ingestAdmission.test.ts',
  'test/admissionScripts.test.ts',
  'test/ingestLimits.test.ts',
  'test/ingestFastify.test.ts',
  'test/ingestFuzz.test.ts',
  'test/ingestWalEdge.test.ts',
  'test/ingestCrash.test.ts',
  'test/ingestWalCrash.test.ts',
  // The analyzer and the management plane on the cluster client.
  'test/ruleEvaluation.test.ts',
  'test/credentials.test.ts',
  'test/billing.test.ts',
  'test/analyzer.test.ts',
];

/** Of those, the files that test the cluster itself: not run against the single Redis. */
const CLUSTER_ONLY_TESTS = ['test/redisCluster.test.ts'];

/** Test files that need no store: they run without the global setup (no migration, no flush). */
export const STORELESS_TESTS = [
  'test/repairGenerate.test.ts',
  'test/repairExport.test.ts',
  'test/repairExportSensitive.test.ts',
  'test/breakingChanges.test.ts',
  'test/edgePerfScript.test.ts',
];

const common = {
  globalSetup: ['test/globalSetup.ts'],
  setupFiles: ['test/setupLogDirs.ts'],
  // Files share one stack and global switches (maintenance pause, test clock): run them one by one.
  fileParallelism: false,
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...common,
          name: 'redis',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...CLUSTER_ONLY_TESTS, ...STORELESS_TESTS],
          env: TEST_ENV,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'storeless',
          include: STORELESS_TESTS,
          testTimeout: common.testTimeout,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...common,
          name: 'redis-cluster',
          include: REDIS_CLUSTER_TESTS,
          env: REDIS_CLUSTER_TEST_ENV,
          // Both projects use the slot's PostgreSQL and ClickHouse databases: one after the other.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
