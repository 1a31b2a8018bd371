import { Redis } from 'ioredis';

export type { Redis } from 'ioredis';

/**
 * One Redis client per process. Commands fail fast while Redis is down (no offline queue),
 * so callers answer 503 instead of hanging. Commands issued in the same event-loop tick go out
 * in one socket write (auto-pipelining): on the ingest edge the many admission and commit calls
 * of a busy tick otherwise cost one loopback write each.
 */
export async function connectRedis(url: string): Promise<Redis> {
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

/** Redis keys shared by several processes, named in one place. */
export const RedisKeys = {
  maintenancePaused: 'maintenance:paused',
  testClockOffset: 'clock:offset_ms',
  credentialEpoch: (connectionId: string) => `cred_epoch:${connectionId}`,
  workspaceCreations: (userId: string) => `ws_create:${userId}`,
  /** 02 Limits: a workspace's rule mutations of the last minute (a sliding window). */
  ruleMutations: (workspaceId: string) => `rule_mut:${workspaceId}`,
  /** 02 Limits: a workspace's previews of the last minute, shared by setup, copy and compensation. */
  configurationPreviews: (workspaceId: string) => `cfg_preview:${workspaceId}`,
  /**
   * Sorted set of the ingest edge's unsettled batches, scored `receivedAtMs + admissionInFlightMs`
   * (shared/admissionTiming.ts): written by the edge, read by the analyzer's stream time.
   */
  pendingAdmissions: 'ingest:pending',
  /**
   * Sorted set of batches durable in an ingest edge's write-ahead log whose rows are not yet in
   * ClickHouse with their analysis job added, scored by receipt time (ms): the analyzer's stream
   * time waits for them too.
   */
  unshippedBatches: 'ingest:unshipped',
  /** Account total of accepted Sandbox observations in a UTC month (`YYYY-MM`), an integer string. */
  sandboxMonthlyUsage: (accountId: string, period: string) => `usage:sandbox:${accountId}:${period}`,
  /** One workspace's accepted observations of a mode in a UTC month, an integer string. */
  workspaceMonthlyUsage: (workspaceId: string, period: string, mode: 'sandbox' | 'live') => `usage:${mode}:ws:${workspaceId}:${period}`,
  /** An operator-set Sandbox monthly allowance of an account (mirrors accounts.sandbox_monthly_allowance). */
  sandboxAllowanceLimit: (accountId: string) => `allowance:sandbox:${accountId}`,
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
}

/** The consumer group of the analyzer on `RedisKeys.analysisJobs` (created by the ingest edge at start-up). */
export const ANALYSIS_CONSUMER_GROUP = 'analyzers';

/**
 * Moves a connection's credential epoch in Redis so the ingest edge drops any cached credential
 * (01: rotation and revocation take effect at once). Credential writers call it before COMMIT
 * (a committed change never lacks a bump; a rolled-back one only costs the edge a reload) and
 * again after COMMIT (so a reload that raced the commit is invalidated too).
 */
export async function bumpCredentialEpoch(redis: Redis, connectionId: string): Promise<number> {
  return redis.incr(RedisKeys.credentialEpoch(connectionId));
}
