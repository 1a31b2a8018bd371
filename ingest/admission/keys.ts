import { accountTag } from '../../shared/redis.js';

/**
 * Redis keys that only the ingest edge uses (shared ones live in shared/redis.ts). Every key an
 * admission touches carries its account's hash tag, so that on a Redis Cluster they are one slot
 * and one script call can take them all as KEYS; the scripts (scripts.ts) name no key
 * themselves. Window keys are hashes of per-second buckets.
 */
export const IngestKeys = {
  integrationRequests: (accountId: string, connectionId: string) => `rl:req:int:${accountTag(accountId)}:${connectionId}`,
  integrationObservations: (accountId: string, connectionId: string) => `rl:obs:int:${accountTag(accountId)}:${connectionId}`,
  workspaceObservations: (accountId: string, workspaceId: string) => `rl:obs:ws:${accountTag(accountId)}:${workspaceId}`,
  sandboxAccountRequests: (accountId: string) => `rl:req:acct:${accountTag(accountId)}`,
  sandboxAccountEnvelopes: (accountId: string) => `rl:obs:acct:${accountTag(accountId)}`,
  connectionChecks: (accountId: string, connectionKey: string) => `rl:check:${accountTag(accountId)}:${connectionKey}`,
  /**
   * A connection's de-duplication hash of one period (see dedupPeriods): field eventId, value
   * `<receipt ms>:<batch id>` of the batch that admitted it.
   */
  eventIds: (accountId: string, connectionId: string, period: number) => `dd:${accountTag(accountId)}:${connectionId}:${period}`,
  /** The account's batches of one period whose rows are durable (field batch id). */
  committedBatches: (accountId: string, period: number) => `dc:${accountTag(accountId)}:${period}`,
  /** The account's admission records of one period until settled (field batch id; see scripts.ts). */
  admissionRecords: (accountId: string, period: number) => `ib:${accountTag(accountId)}:${period}`,
  /** Held by the process settling an overdue batch, so that several edges do not all settle it. */
  resolving: (batchId: string) => `ir:${batchId}`,
} as const;

/** De-duplication periods read per lookup: the current one and the three before it. */
export const DEDUP_PERIODS = 4;

/**
 * eventIds are remembered per period of a third of the de-duplication window: a lookup reads
 * the current and the three previous periods, a write goes to the current one, whose keys live
 * until a whole window after the period ends. An eventId is so remembered for at least the window
 * and at most 4/3 of it, with one hash per connection and period (per-eventId keys cost Redis
 * about 4 µs an envelope, and their own overhead doubled the memory).
 */
export function dedupPeriods(nowMs: number, dedupWindowSeconds: number): { current: number; periodSeconds: number } {
  const periodSeconds = Math.ceil(dedupWindowSeconds / (DEDUP_PERIODS - 1));
  return { current: Math.floor(nowMs / 1000 / periodSeconds), periodSeconds };
}

/** When the keys of `period` expire (unix seconds): a whole window after the period ends. */
export const periodExpiresAt = (period: number, periodSeconds: number, dedupWindowSeconds: number): number =>
  (period + 1) * periodSeconds + dedupWindowSeconds;

/** A member of `RedisKeys.pendingAdmissions`: the account (for its keys) and the batch. */
export const pendingMember = (accountId: string, batchId: string): string => `${accountId}/${batchId}`;
export function parsePendingMember(member: string): { accountId: string; batchId: string } {
  const at = member.indexOf('/');
  return { accountId: member.slice(0, at), batchId: member.slice(at + 1) };
}
