import { Cluster, Redis } from 'ioredis';
import { parseRedisTarget, type RedisTarget } from './redisTarget.js';
import type { EncodedJobGroups } from './analysis/jobGroups.js';

export type { Redis } from 'ioredis';

/**
 * One Redis client per process, for one server or a Redis Cluster (config.redisUrl,
 * shared/redisTarget.ts). Commands fail fast while Redis is down (no offline queue), so callers
 * answer 503 instead of hanging. On one server, commands issued in the same event-loop tick go
 * out in one socket write (auto-pipelining): on the ingest edge the many admission and commit
 * calls of a busy tick otherwise cost one loopback write each (not on a cluster: connectCluster).
 */
export async function connectRedis(url: string): Promise<Redis> {
  const target = parseRedisTarget(url);
  if (target.kind === 'cluster') return connectCluster(target);
  const redis = new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
  });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/**
 * A Redis Cluster client, returned typed as `Redis` (the one cast of the product, docs/decisions/operations.md
 * "Redis Cluster"): both classes inherit every command, with the same signature, from ioredis's
 * Commander, and the cluster routes each command to the master of its key's slot, so callers take
 * either unchanged. What does not work the same on a cluster:
 * - commands, scripts (EVAL/EVALSHA KEYS) and MULTI over several keys need every key in one slot,
 *   else CROSSSLOT: give the keys one hash tag (`{...}`, as `accountTag`);
 * - `pipeline()` needs all its keys on one master;
 * - keyless server commands go to one master only: FLUSHDB, FLUSHALL, SCAN, KEYS, DBSIZE, INFO,
 *   SCRIPT LOAD/EXISTS/FLUSH, so an EVALSHA can meet NOSCRIPT on another master: loop over
 *   `masterNodes()` (or fall back to EVAL);
 * - SELECT: a cluster has only database 0;
 * - `duplicate()` opens another cluster client (a blocking XREADGROUP on it still works);
 * - the client's own fields (`options`, `nodes()`, status events) differ: use `isCluster()`.
 */
async function connectCluster(target: Extract<RedisTarget, { kind: 'cluster' }>): Promise<Redis> {
  const cluster = new Cluster(target.nodes, {
    // Not on a cluster: ioredis groups auto-pipelined commands per node and answers a MOVED
    // for the whole pipeline instead of redirecting each command (redis/ioredis#2075, open;
    // seen here as `MOVED` 500s from the management plane under concurrent requests).
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    lazyConnect: true,
    // No enableOfflineQueue here: ioredis queues the first command of a master while it opens
    // that master's connection; the cluster-level setting above is what refuses commands.
    redisOptions: { username: target.username, password: target.password, maxRetriesPerRequest: 1, connectTimeout: 2000 },
  });
  cluster.on('error', () => undefined);
  try {
    await cluster.connect();
    // ioredis opens a master's connection at its first command: open them all now, so that an
    // unreachable master fails the start-up (as one unreachable server does) rather than requests.
    await Promise.all(cluster.nodes('master').map((node) => node.ping()));
  } catch (error) {
    cluster.disconnect();
    throw error;
  }
  return cluster as unknown as Redis;
}

export const isCluster = (redis: Redis): boolean => (redis as Redis | Cluster) instanceof Cluster;

/** The masters of a cluster client, or the single server's client itself: for the keyless commands above. */
export function masterNodes(redis: Redis): Redis[] {
  const client = redis as Redis | Cluster;
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/**
 * The hash tag of an account's keys: on a Redis Cluster, every key holding it is in one slot, so
 * that one script call of the ingest edge can take all the keys of an admission (ingest/admission).
 */
export const accountTag = (accountId: string): string => `{${accountId}}`;

/** Redis keys shared by several processes, named in one place. */
export const RedisKeys = {
  maintenancePaused: 'maintenance:paused',
  testClockOffset: 'clock:offset_ms',
  credentialEpoch: (accountId: string, connectionId: string) => `cred_epoch:${accountTag(accountId)}:${connectionId}`,
  workspaceCreations: (userId: string) => `ws_create:${userId}`,
  /** Failed console logins of the last 15 minutes (sliding windows), by e-mail HMAC and by client address. */
  loginFailuresByEmail: (emailDigest: string) => `login_fail:email:${emailDigest}`,
  loginFailuresByAddress: (address: string) => `login_fail:addr:${address}`,
  /** Console sign-up attempts of the last hour by client address (a sliding window). */
  signupsByAddress: (address: string) => `signup:addr:${address}`,
  /** Failed device-grant user-code lookups and consents of the last 15 minutes, by user and by client address. */
  userCodeFailuresByUser: (userId: string) => `user_code_fail:user:${userId}`,
  userCodeFailuresByAddress: (address: string) => `user_code_fail:addr:${address}`,
  /** Device authorization requests (POST /oauth/device/code) of the last hour by client address. */
  deviceCodesByAddress: (address: string) => `device_code:addr:${address}`,
  /**
   * Sorted set of the running processes (ingest, analyzer, management), each member a JSON
   * description including whether it honours the test clock, scored by when it last reported
   * (real ms): `admin clock` reads it (shared/processRegistry.ts).
   */
  runningProcesses: 'processes:running',
  /** 02 Limits: a workspace's rule mutations of the last minute (a sliding window). */
  ruleMutations: (workspaceId: string) => `rule_mut:${workspaceId}`,
  /** 02 Limits: a workspace's previews of the last minute, shared by setup, copy and compensation. */
  configurationPreviews: (workspaceId: string) => `cfg_preview:${workspaceId}`,
  /** A workspace's contract registrations, and its activations and rollbacks, of the last minute (sliding windows). */
  contractRegistrations: (workspaceId: string) => `contract_reg:${workspaceId}`,
  contractActivations: (workspaceId: string) => `contract_act:${workspaceId}`,
  /**
   * Sorted set of the batches admitted and not yet durable in an ingest edge's log, scored by
   * receipt time (ms): written by the edge, read by the analyzer's stream time.
   */
  pendingAdmissions: 'ingest:pending',
  /**
   * Sorted set of the batches durable in an ingest edge's log whose analysis job the analyzer has
   * not yet acknowledged, scored by receipt time (ms): the analyzer's stream time waits for them.
   */
  unanalysedBatches: 'ingest:unanalysed',
  /** Account total of accepted Sandbox observations in a UTC month (`YYYY-MM`), an integer string. */
  sandboxMonthlyUsage: (accountId: string, period: string) => `usage:sandbox:${accountTag(accountId)}:${period}`,
  /** One workspace's accepted observations of a mode in a UTC month, an integer string. */
  workspaceMonthlyUsage: (accountId: string, workspaceId: string, period: string, mode: 'sandbox' | 'live') =>
    `usage:${mode}:ws:${accountTag(accountId)}:${workspaceId}:${period}`,
  /** An operator-set Sandbox monthly allowance of an account (mirrors accounts.sandbox_monthly_allowance). */
  sandboxAllowanceLimit: (accountId: string) => `allowance:sandbox:${accountTag(accountId)}`,
  /** Analysis work: one stream entry per ingested batch with new observations (read by ANALYSIS_CONSUMER_GROUP). */
  analysisJobs: 'analysis:jobs',
} as const;

/** One entry of `RedisKeys.analysisJobs`: written by the ingest edge, read by the analyzer. */
export interface AnalysisJob {
  connectionId: string;
  workspaceId: string;
  mode: string;
  batchId: string;
  receivedAtMs: number;
  eventIds: string[];
  /**
   * The new items grouped by what analysis depends on (shared/analysis/jobGroups.ts), so the
   * analyzer need not read the rows back. Absent in jobs of older edges: they are read back.
   * The same text in the log record's head and the stream entry's `groups` field.
   */
  groups?: EncodedJobGroups;
}

/** A job's stream entry fields, as XADD takes them (analyzer/jobStream.ts reads them back). */
export const analysisJobFields = (job: AnalysisJob): string[] => [
  'connectionId',
  job.connectionId,
  'workspaceId',
  job.workspaceId,
  'mode',
  job.mode,
  'batchId',
  job.batchId,
  'receivedAtMs',
  String(job.receivedAtMs),
  'eventIds',
  job.eventIds.join(','),
  // A job of an older log record has no groups: the analyzer reads its rows back instead.
  ...(job.groups === undefined ? [] : ['groups', job.groups]),
];

/** The consumer group of the analyzer on `RedisKeys.analysisJobs` (created by the ingest edge at start-up). */
export const ANALYSIS_CONSUMER_GROUP = 'analyzers';

/**
 * Moves a connection's credential epoch in Redis so the ingest edge drops any cached credential
 * (01: rotation and revocation take effect at once). Credential writers call it before COMMIT
 * (a committed change never lacks a bump; a rolled-back one only costs the edge a reload) and
 * again after COMMIT (so a reload that raced the commit is invalidated too).
 */
export async function bumpCredentialEpoch(redis: Redis, accountId: string, connectionId: string): Promise<number> {
  return redis.incr(RedisKeys.credentialEpoch(accountId, connectionId));
}
