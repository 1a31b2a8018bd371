import { createHash } from 'node:crypto';
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
   * The de-duplication hash of one connection and period as the edge wrote it before the bucketed
   * layout (field eventId, value `<receipt ms>:<batch id>`). Read only, until the last of them
   * expires (4/3 of the window after an upgrade): see docs/decisions/ingest.md, De-duplication memory.
   */
  eventIds: (accountId: string, connectionId: string, period: number) => `dd:${accountTag(accountId)}:${connectionId}:${period}`,
  /**
   * The bucketed de-duplication set of one connection and period: its meta, a string
   * `<buckets>:<entries>`, under this key, and its buckets under the key less its final `m`
   * followed by the bucket index (`dd:{acct}:conn:period:0`, `…:1`, …; see dedupBucket), each a
   * string of DEDUP_ENTRY_BYTES entries back to back (digest, then the admitting batch's tag). The
   * script computes the bucket keys from this one, which it is passed as KEYS.
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

/** Bytes of an eventId's digest kept in its de-duplication entry. */
export const EVENT_ID_DIGEST_BYTES = 8;
/** Bytes of a batch's tag (batchTag), and of a de-duplication entry: digest then tag. */
export const BATCH_TAG_BYTES = 11;
export const DEDUP_ENTRY_BYTES = EVENT_ID_DIGEST_BYTES + BATCH_TAG_BYTES;

/**
 * An eventId's de-duplication digest: the first 8 bytes of its SHA-256. Its bytes 5 to 8, as an
 * unsigned 32-bit number, also choose its bucket (dedupBucket), so a split can place every entry
 * of a bucket from the entry alone.
 */
export const eventIdDigest = (eventId: string): Buffer => createHash('sha256').update(eventId).digest().subarray(0, EVENT_ID_DIGEST_BYTES);

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

/** The key of bucket `index` of the set whose meta key is `metaKey`. */
export const dedupBucketKey = (metaKey: string, index: number): string => `${metaKey.slice(0, -1)}${index}`;

/** Admission.newBatchId's form: 12 hex characters (6 random bytes of the process), then a base36 counter. */
export const BATCH_ID = /^[0-9a-f]{12}(0|[1-9a-z][0-9a-z]*)$/;
const MAX_TAGGED_COUNTER = 2 ** 40;

/**
 * A batch id as its de-duplication tag, 11 bytes: its 6 random bytes, then its counter as a 40-bit
 * big-endian number (a fixed width, so that a bucket is an array of fixed-width entries; 2^40
 * batches per process). The scripts turn a tag back into the batch id (Lua batch_of, batchOfTag
 * here), which names the batch's committed field and admission record.
 */
export function batchTag(batchId: string): Buffer {
  const counter = BATCH_ID.test(batchId) ? Number.parseInt(batchId.slice(12), 36) : Number.NaN;
  if (!(counter < MAX_TAGGED_COUNTER)) throw new Error(`batch id ${JSON.stringify(batchId)} is not of Admission.newBatchId's form`);
  const tag = Buffer.alloc(BATCH_TAG_BYTES);
  tag.write(batchId.slice(0, 12), 0, 'hex');
  tag.writeUIntBE(counter, 6, 5);
  return tag;
}
export const batchOfTag = (tag: Buffer): string => tag.subarray(0, 6).toString('hex') + tag.readUIntBE(6, 5).toString(36);

/** When the keys of `period` expire (unix seconds): a whole window after the period ends. */
export const periodExpiresAt = (period: number, periodSeconds: number, dedupWindowSeconds: number): number =>
  (period + 1) * periodSeconds + dedupWindowSeconds;

/** A member of `RedisKeys.pendingAdmissions`: the account (for its keys) and the batch. */
export const pendingMember = (accountId: string, batchId: string): string => `${accountId}/${batchId}`;
export function parsePendingMember(member: string): { accountId: string; batchId: string } {
  const at = member.indexOf('/');
  return { accountId: member.slice(0, at), batchId: member.slice(at + 1) };
}
