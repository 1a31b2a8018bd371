import { accountTag } from '../../shared/redis.js';

/**
 * Redis keys that only the ingest edge uses (shared ones live in shared/redis.ts). Every key an
 * admission touches carries its account's hash tag, so that on a Redis Cluster they are one slot
 * and one script call can take them all as KEYS; the scripts (scripts.ts) name one key themselves,
 * a de-duplication set's buckets hash, from its meta key (same tag, same slot). Window keys are
 * hashes of per-second buckets.
 */
export const IngestKeys = {
  integrationRequests: (accountId: string, connectionId: string) => `rl:req:int:${accountTag(accountId)}:${connectionId}`,
  integrationObservations: (accountId: string, connectionId: string) => `rl:obs:int:${accountTag(accountId)}:${connectionId}`,
  workspaceObservations: (accountId: string, workspaceId: string) => `rl:obs:ws:${accountTag(accountId)}:${workspaceId}`,
  sandboxAccountRequests: (accountId: string) => `rl:req:acct:${accountTag(accountId)}`,
  sandboxAccountEnvelopes: (accountId: string) => `rl:obs:acct:${accountTag(accountId)}`,
  connectionChecks: (accountId: string, connectionKey: string) => `rl:check:${accountTag(accountId)}:${connectionKey}`,
  /**
   * The de-duplication hash of one connection and period as the edge wrote it before the bucketed
   * layout (field eventId, value `<receipt ms>:<batch id>`). Read only, until the last of them
   * expires (4/3 of the window after an upgrade): see docs/decisions/ingest.md, De-duplication memory.
   */
  eventIds: (accountId: string, connectionId: string, period: number) => `dd:${accountTag(accountId)}:${connectionId}:${period}`,
  /**
   * The bucketed de-duplication set of one connection and period: its meta, a string
   * `<buckets>:<entries>`, under this key, and its buckets in one hash under the key with its
   * final `m` made `b` (dedupBucketsKey): field the bucket index (dedupBucket), value the 10-byte
   * digests (eventIdDigest) of its eventIds back to back.
   */
  eventIdMeta: (accountId: string, connectionId: string, period: number) => `dd:${accountTag(accountId)}:${connectionId}:${period}:m`,
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

/**
 * Linear hashing: the bucket of a digest in a set of `buckets` buckets. With 2^L the largest power
 * of two not above `buckets`, the bucket is h mod 2^L, or h mod 2^(L+1) when that is below the
 * split pointer `buckets - 2^L` (those buckets are already split). The Lua of scripts.ts computes
 * the same; tests use this to find entries.
 */
export function dedupBucket(digest: Buffer, buckets: number): number {
  const h = digest.readUInt32BE(4);
  let low = 1;
  while (low * 2 <= buckets) low *= 2;
  const index = h % low;
  return index < buckets - low ? h % (low * 2) : index;
}

/** The hash of the buckets of the set whose meta key is `metaKey`. */
export const dedupBucketsKey = (metaKey: string): string => `${metaKey.slice(0, -1)}b`;

/** When the keys of `period` expire (unix seconds): a whole window after the period ends. */
export const periodExpiresAt = (period: number, periodSeconds: number, dedupWindowSeconds: number): number =>
  (period + 1) * periodSeconds + dedupWindowSeconds;

/** A member of `RedisKeys.pendingAdmissions`: the account (for its keys) and the batch. */
export const pendingMember = (accountId: string, batchId: string): string => `${accountId}/${batchId}`;
export function parsePendingMember(member: string): { accountId: string; batchId: string } {
  const at = member.indexOf('/');
  return { accountId: member.slice(0, at), batchId: member.slice(at + 1) };
}
