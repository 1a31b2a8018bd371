import { createHash } from 'node:crypto';

/**
 * The lowercase hex SHA-256 of a shape's JSON text (the `schema_shape` value, before TabSeparated
 * escaping), equal to ClickHouse's `lower(hex(SHA256(schema_shape)))` (the `shape_hash` column,
 * migrations/clickhouse/0003): the key by which analysis groups and memoises comparisons.
 *
 * Hashing costs ~1–2 µs per KB of shape, and a connection sends few distinct shapes, so the
 * hashes are memoised per thread (each worker thread has its own): the cost follows distinct
 * shapes, not items. Not in a Map keyed by the text: V8 hashes a string key character by
 * character, which for a shape of a few KB costs about as much as the SHA-256 itself (measured:
 * 2.4 µs per envelope at the edge in the ingest-cpu bench's profile). The memo is keyed instead by
 * a fingerprint of the text's length and 32 characters spread over it, and a hit is confirmed by
 * comparing the whole text (a memory comparison). It is bounded by entries, by characters and by
 * texts per fingerprint (texts built to share one fingerprint are hashed rather than compared
 * with ever more), and starts afresh when full.
 */
const MEMO_MAX_ENTRIES = 1024;
const MEMO_MAX_CHARS = 4_000_000;
const MAX_PER_FINGERPRINT = 4;
const SAMPLES = 32;

interface Known {
  text: string;
  hash: string;
}

const memo = new Map<number, Known[]>();
let memoEntries = 0;
let memoChars = 0;

function fingerprint(text: string): number {
  const step = Math.max(1, Math.floor(text.length / SAMPLES));
  let value = text.length;
  for (let at = 0; at < text.length; at += step) value = (Math.imul(value, 31) + text.charCodeAt(at)) | 0;
  return value;
}

export function shapeHash(shape: string): string {
  const key = fingerprint(shape);
  const known = memo.get(key);
  if (known !== undefined) {
    for (const entry of known) if (entry.text === shape) return entry.hash;
  }
  const hash = createHash('sha256').update(shape, 'utf8').digest('hex');
  if (known !== undefined && known.length >= MAX_PER_FINGERPRINT) return hash;
  if (memoEntries >= MEMO_MAX_ENTRIES || memoChars + shape.length > MEMO_MAX_CHARS) {
    memo.clear();
    memoEntries = 0;
    memoChars = 0;
  }
  if (shape.length > MEMO_MAX_CHARS) return hash;
  const list = memo.get(key);
  if (list === undefined) memo.set(key, [{ text: shape, hash }]);
  else list.push({ text: shape, hash });
  memoEntries += 1;
  memoChars += shape.length;
  return hash;
}
