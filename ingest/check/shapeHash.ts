import { createHash } from 'node:crypto';

/**
 * The lowercase hex SHA-256 of a shape's JSON text (the `schema_shape` value, before TabSeparated
 * escaping), equal to ClickHouse's `lower(hex(SHA256(schema_shape)))` (the `shape_hash` column,
 * migrations/clickhouse/0003): the key by which analysis groups and memoises comparisons.
 *
 * Hashing costs ~1–2 µs per KB of shape, and a connection sends few distinct shapes, so the
 * hashes are memoised by text, per thread (each worker thread has its own): the cost follows
 * distinct shapes, not items. The memo is bounded by entries and by characters, and starts
 * afresh when full (a flood of distinct shapes costs the hashing it would without a memo).
 */
const MEMO_MAX_ENTRIES = 1024;
const MEMO_MAX_CHARS = 4_000_000;

const memo = new Map<string, string>();
let memoChars = 0;

export function shapeHash(shape: string): string {
  const known = memo.get(shape);
  if (known !== undefined) return known;
  const hash = createHash('sha256').update(shape, 'utf8').digest('hex');
  if (memo.size >= MEMO_MAX_ENTRIES || memoChars + shape.length > MEMO_MAX_CHARS) {
    memo.clear();
    memoChars = 0;
  }
  if (shape.length <= MEMO_MAX_CHARS) {
    memo.set(shape, hash);
    memoChars += shape.length;
  }
  return hash;
}
