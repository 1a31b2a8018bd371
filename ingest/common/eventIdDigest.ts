import { hash } from 'node:crypto';

// The de-duplication digest of an eventId (admission/keys.ts, admission/scripts.ts). Here, below
// both stages and without Redis, because the check's worker threads make the digests.

/**
 * Bytes of an eventId's digest in a de-duplication bucket: 80 bits, so that a new eventId is taken
 * for a remembered one of its connection with a chance of about M / 2^80 (M the connection's
 * remembered eventIds: about 3e-16 at 400 M), where 8 bytes would give about 2e-11.
 */
export const EVENT_ID_DIGEST_BYTES = 10;

/**
 * An eventId's de-duplication digest: the first 10 bytes of its SHA-256. Its bytes 5 to 8, as an
 * unsigned 32-bit number, also choose its bucket (dedupBucket), so a split can place every digest
 * of a bucket from the digest alone.
 */
export const eventIdDigest = (eventId: string): Buffer => hash('sha256', eventId, 'buffer').subarray(0, EVENT_ID_DIGEST_BYTES);

/**
 * The digests of a batch's eventIds as ADMIT takes them (scripts.ts): in lowercase hex joined by
 * `,`, the admission record's list as it is stored, and as bytes back to back, what the buckets
 * hold. The check's worker threads make both, so the edge thread converts neither. `bytes` has
 * memory of its own: posting a view of Node's shared pool would copy the whole pool.
 */
export interface EventIdDigests {
  hexList: string;
  bytes: Uint8Array;
}

export function eventIdDigests(eventIds: readonly string[]): EventIdDigests {
  const bytes = new Uint8Array(eventIds.length * EVENT_ID_DIGEST_BYTES);
  let hexList = '';
  eventIds.forEach((eventId, index) => {
    const digest = eventIdDigest(eventId);
    bytes.set(digest, index * EVENT_ID_DIGEST_BYTES);
    hexList += `${index === 0 ? '' : ','}${digest.toString('hex')}`;
  });
  return { hexList, bytes };
}
