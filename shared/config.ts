import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { clusterUrlOf, parseClusterNodes, parseRedisTarget, REDIS_CLUSTER_SCHEME, RedisTargetError } from './redisTarget.js';
import { ADMISSION_DEADLINE_MIN_MS, RECEIPT_TO_ADMISSION_MAX_MS } from './admissionTiming.js';

/**
 * Typed configuration, read once from the environment and validated; a bad value stops the
 * process at start-up with a message naming the variable. Defaults point at the loopback
 * stack of 00-decisions §1. README lists every variable.
 */
export interface Config {
  databaseUrl: string;
  /** `redis://` one server, or `redis+cluster://host:port,...` a Redis Cluster (REDIS_CLUSTER_NODES; shared/redisTarget.ts). */
  redisUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  /**
   * CLICKHOUSE_CLUSTER: a cluster of CLICKHOUSE_URL's `remote_servers` to migrate as shards
   * (shared/clickhouse/migrate.ts, README "ClickHouse cluster"); unset: one server.
   */
  clickhouseCluster?: string;
  ingest: IngestEdgeConfig;
  management: ManagementConfig;
  analyzer: AnalyzerConfig;
  dataDir: string;
  secretEncryptionKey: Buffer;
  enableTestClock: boolean;
  consoleOrigin: string;
  sessionTtlSeconds: number;
  workspaceCreationsPerHour: number;
  auth: AuthLimits;
  oauth: OAuthLimits;
  logLevel: string;
  limits: IngestLimits;
}

/** The ingest edge's address and tuning (README lists the variables). */
export interface IngestEdgeConfig {
  host: string;
  port: number;
  /** How long an accepted eventId is remembered in Redis for de-duplication (seconds). */
  dedupWindowSeconds: number;
  /** A shipper insert that has not committed within this time is abandoned and sent again. */
  insertTimeoutMs: number;
  /**
   * An admitted batch not made durable in the log within this time is taken to be lost (its edge
   * died or lost Redis's answer): its eventIds are then released (ingest/admission/resolver.ts).
   */
  admissionDeadlineMs: number;
  /** How often the edge settles admitted batches whose process never reported them (ingest/admission/resolver.ts). */
  settleIntervalMs: number;
  /** Per-client budget of GET /v1/collector/connection (per Connection key and minute). */
  connectionChecksPerMin: number;
  /** Approximate cap of the `analysis:jobs` stream (XADD MAXLEN ~). */
  analysisStreamMaxLen: number;
  /**
   * Worker threads that parse, validate and serialise batches under load (ingest/check/checker.ts);
   * 0: the edge thread checks every batch itself.
   */
  workerThreads: number;
  /**
   * 64 KiB slots of memory shared with those threads, for request bodies and rows
   * (ingest/offload/sharedSlots.ts); 0: none. Reserved at start, resident as they are first used.
   */
  sharedSlots: number;
  /**
   * The write-ahead log's folder: accepted batches are answered once durable there and shipped
   * to ClickHouse from it. One edge process per folder (it is locked while open).
   */
  walDir: string;
  /** A log segment is closed past this size. */
  walSegmentBytes: number;
  /** Past this many unshipped bytes, or an unshipped batch this old, requests get 503 until the log ships. */
  walMaxBytes: number;
  walMaxAgeMs: number;
  /**
   * Past this many unshipped bytes, while shipping works, intake is paced to the shipped rate
   * (ingest/log/intakePacer.ts); 0: never. A request waits at most walPaceMaxWaitMs, then gets 503.
   */
  walPaceBytes: number;
  walPaceMaxWaitMs: number;
  /** One ClickHouse insert of the shipper takes at most about this many bytes. */
  shipMaxBytes: number;
  /** What is in the log is shipped at the latest this long after it arrived. */
  shipIntervalMs: number;
  /**
   * A body over 1 MiB is read and discarded up to this many bytes in all, for at most lingerMs,
   * before its 413 is answered and the connection closed (ingest/http/lingeringRefusal.ts).
   */
  lingerMaxBytes: number;
  lingerMs: number;
}

/**
 * Server-side limits on every ClickHouse read of a process (shared/clickhouse/client.ts): one
 * tenant's read cannot hold ClickHouse's cores or memory past them.
 */
export interface ClickHouseReadLimits {
  /** ClickHouse `max_execution_time`, seconds. */
  maxExecutionSeconds: number;
  /** ClickHouse `max_memory_usage`, bytes. */
  maxMemoryBytes: number;
}

/** The management plane's address and per-tenant limits (README lists the variables). */
export interface ManagementConfig {
  host: string;
  port: number;
  clickhouseReads: ClickHouseReadLimits;
  /** Contract registrations per workspace per rolling minute. */
  contractRegistrationsPerMin: number;
  /** Contract activations (promote and rollback) per workspace per rolling minute. */
  contractActivationsPerMin: number;
  /** Reconciliation rules one connection may hold. */
  rulesPerConnection: number;
  /** 03 Reviewed repairs 2: whether repair proposals may be requested (503 `repair_generator_unavailable` when disabled). */
  repairGeneration: 'enabled' | 'disabled';
}

/** The analyzer's address and tuning (README lists the variables). */
export interface AnalyzerConfig {
  host: string;
  port: number;
  clickhouseReads: ClickHouseReadLimits;
  /** Piscina threads comparing shapes the memo does not hold; 0: the main thread compares. */
  workerThreads: number;
  /** Stream entries read (and committed in one transaction) per round. */
  batchJobs: number;
  /** Rounds in flight at once per process. */
  concurrency: number;
  /**
   * A round that found fewer entries than batchJobs is followed by a pause so that each read
   * loop starts at most one round per this many ms: rounds then gather the jobs of that time
   * (fewer, larger ClickHouse reads and PostgreSQL transactions) at the cost of that much lag.
   */
  roundIntervalMs: number;
  /** An entry another consumer has not acknowledged for this long is claimed (XAUTOCLAIM). */
  claimIdleMs: number;
  /** Memoised (version, operation, shape) comparison results kept per process. */
  memoEntries: number;
  /** How long a committed batch's marker is kept against a redelivery of its entry. */
  batchMarkerRetentionSeconds: number;
  /** How often the outbox is polled for reanalysis jobs. */
  reanalysisPollMs: number;
  /** How often due reconciliation deadlines are looked for (analyzer/ruleFiring.ts). */
  rulePollMs: number;
  /**
   * Stream time stays this far behind the service clock (analyzer/streamTime.ts): a request
   * stamped with its receipt time but not yet admitted, and the clocks of several hosts, are
   * covered by it.
   */
  ruleGraceMs: number;
  /**
   * A repair proposal a worker claimed is its own for this long (analyzer/repairJobs.ts); one
   * whose worker died is claimed again after it, at most three times in all.
   */
  repairLeaseMs: number;
  /** `disabled`: this analyzer never claims repair proposals (others, or dedicated instances, do). */
  repairs: 'enabled' | 'disabled';
  /** How often queued repair proposals are looked for when no notification wakes the loop. */
  repairPollMs: number;
  /**
   * Test only, honoured with ENABLE_TEST_CLOCK=1: a claimed proposal is held and never worked,
   * so a test can kill the process mid-generation.
   */
  holdRepairs: boolean;
}

/** Console login and sign-up throttles (management/session/authThrottle.ts; README lists the variables). */
export interface AuthLimits {
  /** Failed logins per e-mail address (known or not) in a rolling 15 minutes. */
  loginFailuresPerEmail: number;
  /** Failed logins per client address (an IPv6 /64) in a rolling 15 minutes. */
  loginFailuresPerAddress: number;
  /** Sign-up attempts per client address (an IPv6 /64) in a rolling hour. */
  signupsPerAddressPerHour: number;
}

/** The device grant's limits (management/oauth/oauthThrottle.ts; README lists the variables). */
export interface OAuthLimits {
  /** Device authorization requests per client address (an IPv6 /64) in a rolling hour. */
  deviceCodesPerAddressPerHour: number;
  /** User codes that name no pending request, per signed-in user, in a rolling 15 minutes. */
  userCodeFailuresPerUser: number;
  /** The same per client address (an IPv6 /64). */
  userCodeFailuresPerAddress: number;
}

export interface IngestLimits {
  integrationRequestsPerMin: number;
  integrationObservationsPerMin: number;
  workspaceObservationsPerMin: number;
  sandboxAccountEnvelopesPerMin: number;
  sandboxAccountRequestsPerMin: number;
  sandboxMonthlyAllowance: number;
  sandboxQuotaEnforced: boolean;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true/false or 1/0, got "${raw}"`);
}

function oneOf<const T extends readonly string[]>(env: Env, name: string, values: T, fallback: T[number]): T[number] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = values.find((candidate) => candidate === raw);
  if (value === undefined) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return value;
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const value = str(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}`);
  return value;
}

/**
 * SECRET_ENCRYPTION_KEY is 32 bytes as 64 hex characters or base64. For local runs without it, a key
 * is generated once into `<DATA_DIR>/secret-encryption.key` (00-decisions §4) so restarts can still
 * decrypt stored ingest tokens.
 */
function encryptionKey(env: Env, dataDir: string): Buffer {
  const raw = env.SECRET_ENCRYPTION_KEY;
  if (raw) {
    const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new ConfigError('SECRET_ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)');
    return key;
  }
  const file = resolve(dataDir, 'secret-encryption.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte hex key`);
  return key;
}

/**
 * REDIS_CLUSTER_NODES (`host:port,...`), when set, wins over REDIS_URL and selects a Redis Cluster;
 * REDIS_URL may name one too, as `redis+cluster://host:port,...`.
 */
function redisUrl(env: Env): string {
  const nodes = str(env, 'REDIS_CLUSTER_NODES', '');
  const [name, value] = nodes !== '' ? ['REDIS_CLUSTER_NODES', nodes] : ['REDIS_URL', str(env, 'REDIS_URL', '')];
  if (name === 'REDIS_URL' && !value.startsWith(REDIS_CLUSTER_SCHEME)) return url(env, 'REDIS_URL', 'redis://127.0.0.1:6379/0', ['redis:']);
  try {
    if (name === 'REDIS_CLUSTER_NODES') return clusterUrlOf(parseClusterNodes(value));
    parseRedisTarget(value);
    return value;
  } catch (error) {
    if (error instanceof RedisTargetError) throw new ConfigError(`${name}: ${error.message}`);
    throw error;
  }
}

function clickhouseCluster(env: Env): Pick<Config, 'clickhouseCluster'> {
  const name = str(env, 'CLICKHOUSE_CLUSTER', '');
  if (name === '') return {};
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ConfigError(`CLICKHOUSE_CLUSTER must be a plain cluster name, got "${name}"`);
  return { clickhouseCluster: name };
}

const GIB = 1024 ** 3;

/**
 * `<PROCESS>_CLICKHOUSE_MAX_EXECUTION_SECONDS` and `<PROCESS>_CLICKHOUSE_MAX_MEMORY_BYTES`. At most
 * 55 s: the client waits 5 s longer than the server's limit (shared/clickhouse/client.ts) and
 * @clickhouse/client warns past 60 s without progress headers.
 */
function readLimits(env: Env, process: 'MANAGEMENT' | 'ANALYZER', seconds: number, bytes: number): ClickHouseReadLimits {
  return {
    maxExecutionSeconds: int(env, `${process}_CLICKHOUSE_MAX_EXECUTION_SECONDS`, seconds, 1, 55),
    maxMemoryBytes: int(env, `${process}_CLICKHOUSE_MAX_MEMORY_BYTES`, bytes, 1),
  };
}

/** INGEST_WORKER_THREADS when unset: the machine's cores, at most 8. */
const defaultWorkerThreads = (): number => Math.min(availableParallelism(), 8);

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(str(env, 'DATA_DIR', './.data'));
  const host = (name: string) => str(env, name, '127.0.0.1');
  const ingest: IngestEdgeConfig = {
    host: host('INGEST_HOST'),
    port: int(env, 'INGEST_PORT', 8080, 0, 65535),
    dedupWindowSeconds: int(env, 'INGEST_DEDUP_WINDOW_SECONDS', 7 * 24 * 3600, 60),
    insertTimeoutMs: int(env, 'INGEST_INSERT_TIMEOUT_MS', 30_000, 100, 600_000),
    admissionDeadlineMs: int(env, 'INGEST_ADMISSION_DEADLINE_MS', 15_000, ADMISSION_DEADLINE_MIN_MS, 600_000),
    settleIntervalMs: int(env, 'INGEST_SETTLE_INTERVAL_MS', 1_000, 100, 3_600_000),
    connectionChecksPerMin: int(env, 'INGEST_CONNECTION_CHECKS_PER_MIN', 60, 1),
    analysisStreamMaxLen: int(env, 'INGEST_ANALYSIS_STREAM_MAXLEN', 1_000_000, 1000),
    workerThreads: int(env, 'INGEST_WORKER_THREADS', defaultWorkerThreads(), 0, 64),
    sharedSlots: int(env, 'INGEST_SHARED_SLOTS', 2048, 0, 65_536),
    walDir: resolve(str(env, 'INGEST_WAL_DIR', `${dataDir}/ingest-wal`)),
    walSegmentBytes: int(env, 'INGEST_WAL_SEGMENT_BYTES', 64 * 1024 * 1024, 1024 * 1024, 1024 * 1024 * 1024),
    walMaxBytes: int(env, 'INGEST_WAL_MAX_BYTES', 2 * 1024 * 1024 * 1024, 1024 * 1024),
    walMaxAgeMs: int(env, 'INGEST_WAL_MAX_AGE_MS', 15 * 60_000, 1_000),
    walPaceBytes: int(env, 'INGEST_WAL_PACE_BYTES', 128 * 1024 * 1024, 0),
    walPaceMaxWaitMs: int(env, 'INGEST_WAL_PACE_MAX_WAIT_MS', 2_000, 10, 60_000),
    shipMaxBytes: int(env, 'INGEST_SHIP_MAX_BYTES', 32 * 1024 * 1024, 64 * 1024, 256 * 1024 * 1024),
    shipIntervalMs: int(env, 'INGEST_SHIP_INTERVAL_MS', 1_000, 10, 60_000),
    lingerMaxBytes: int(env, 'INGEST_LINGER_MAX_BYTES', 32 * 1024 * 1024, 1024 * 1024, 1024 * 1024 * 1024),
    lingerMs: int(env, 'INGEST_LINGER_MS', 5_000, 0, 8_000),
  };
  return {
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://svc:svc@127.0.0.1:5432/svc', ['postgres:', 'postgresql:']),
    redisUrl: redisUrl(env),
    clickhouseUrl: url(env, 'CLICKHOUSE_URL', 'http://127.0.0.1:8123', ['http:', 'https:']),
    clickhouseDatabase: str(env, 'CLICKHOUSE_DATABASE', 'svc'),
    ...clickhouseCluster(env),
    ingest,
    management: {
      host: host('MANAGEMENT_HOST'),
      port: int(env, 'MANAGEMENT_PORT', 8081, 0, 65535),
      clickhouseReads: readLimits(env, 'MANAGEMENT', 8, GIB),
      contractRegistrationsPerMin: int(env, 'CONTRACT_REGISTRATIONS_PER_MIN', 60, 1),
      contractActivationsPerMin: int(env, 'CONTRACT_ACTIVATIONS_PER_MIN', 60, 1),
      rulesPerConnection: int(env, 'RULES_PER_CONNECTION', 200, 1, 100_000),
      repairGeneration: oneOf(env, 'REPAIR_GENERATION', ['enabled', 'disabled'] as const, 'enabled'),
    },
    analyzer: {
      host: host('ANALYZER_HOST'),
      port: int(env, 'ANALYZER_PORT', 8082, 0, 65535),
      clickhouseReads: readLimits(env, 'ANALYZER', 25, 2 * GIB),
      workerThreads: int(env, 'ANALYZER_WORKER_THREADS', Math.min(availableParallelism(), 4), 0, 64),
      batchJobs: int(env, 'ANALYZER_BATCH_JOBS', 500, 1, 10_000),
      concurrency: int(env, 'ANALYZER_CONCURRENCY', 2, 1, 64),
      roundIntervalMs: int(env, 'ANALYZER_ROUND_INTERVAL_MS', 250, 0, 60_000),
      claimIdleMs: int(env, 'ANALYZER_CLAIM_IDLE_MS', 30_000, 100, 3_600_000),
      memoEntries: int(env, 'ANALYZER_MEMO_ENTRIES', 100_000, 0, 10_000_000),
      batchMarkerRetentionSeconds: int(env, 'ANALYZER_BATCH_MARKER_RETENTION_SECONDS', 24 * 3600, 60),
      reanalysisPollMs: int(env, 'ANALYZER_REANALYSIS_POLL_MS', 500, 10, 60_000),
      rulePollMs: int(env, 'ANALYZER_RULE_POLL_MS', 1_000, 10, 60_000),
      // At least the longest an edge takes from a receipt to its admission (streamTime.ts).
      ruleGraceMs: int(env, 'ANALYZER_RULE_GRACE_MS', 10_000, RECEIPT_TO_ADMISSION_MAX_MS, 600_000),
      repairLeaseMs: int(env, 'ANALYZER_REPAIR_LEASE_MS', 60_000, 1_000, 3_600_000),
      repairs: oneOf(env, 'ANALYZER_REPAIRS', ['enabled', 'disabled'] as const, 'enabled'),
      repairPollMs: int(env, 'ANALYZER_REPAIR_POLL_MS', 1_000, 10, 60_000),
      holdRepairs: bool(env, 'ENABLE_TEST_CLOCK', false) && bool(env, 'ANALYZER_TEST_HOLD_REPAIRS', false),
    },
    dataDir,
    secretEncryptionKey: encryptionKey(env, dataDir),
    enableTestClock: bool(env, 'ENABLE_TEST_CLOCK', false),
    consoleOrigin: str(env, 'CONSOLE_ORIGIN', 'http://127.0.0.1:8081'),
    sessionTtlSeconds: int(env, 'SESSION_TTL_SECONDS', 14 * 24 * 3600, 60),
    workspaceCreationsPerHour: int(env, 'WORKSPACE_CREATIONS_PER_HOUR', 10, 1),
    auth: {
      loginFailuresPerEmail: int(env, 'AUTH_LOGIN_FAILURES_PER_EMAIL', 10, 1),
      loginFailuresPerAddress: int(env, 'AUTH_LOGIN_FAILURES_PER_ADDRESS', 50, 1),
      signupsPerAddressPerHour: int(env, 'AUTH_SIGNUPS_PER_ADDRESS_PER_HOUR', 10, 1),
    },
    oauth: {
      deviceCodesPerAddressPerHour: int(env, 'OAUTH_DEVICE_CODES_PER_ADDRESS_PER_HOUR', 30, 1),
      userCodeFailuresPerUser: int(env, 'OAUTH_USER_CODE_FAILURES_PER_USER', 10, 1),
      userCodeFailuresPerAddress: int(env, 'OAUTH_USER_CODE_FAILURES_PER_ADDRESS', 50, 1),
    },
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    limits: {
      integrationRequestsPerMin: int(env, 'INGEST_INTEGRATION_REQUESTS_PER_MIN', 600, 1),
      integrationObservationsPerMin: int(env, 'INGEST_INTEGRATION_OBSERVATIONS_PER_MIN', 6000, 1),
      workspaceObservationsPerMin: int(env, 'INGEST_WORKSPACE_OBSERVATIONS_PER_MIN', 30000, 1),
      sandboxAccountEnvelopesPerMin: int(env, 'SANDBOX_ACCOUNT_ENVELOPES_PER_MIN', 1000, 1),
      sandboxAccountRequestsPerMin: int(env, 'SANDBOX_ACCOUNT_REQUESTS_PER_MIN', 100, 1),
      sandboxMonthlyAllowance: int(env, 'SANDBOX_MONTHLY_ALLOWANCE', 10000, 0),
      sandboxQuotaEnforced: bool(env, 'SANDBOX_QUOTA_ENFORCED', true),
    },
  };
}
