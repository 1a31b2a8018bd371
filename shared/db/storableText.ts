// PostgreSQL `text` and `jsonb` refuse U+0000, and node-postgres encodes a lone UTF-16 surrogate
// as U+FFFD, so a string holding either would fail the query or be stored altered.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** True when PostgreSQL can store the string exactly as it is. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** The string with each character PostgreSQL cannot store replaced by U+FFFD. */
export function toStorableText(value: string): string {
  return value.replace(UNSTORABLE_ALL, '\ufffd');
}
