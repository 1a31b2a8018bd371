import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** RFC 8785 (JCS) canonical JSON of a value. */
export function canonicalJson(value: unknown): string {
  const text = (canonicalize as unknown as (v: unknown) => string | undefined)(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

/** 00-decisions §4: `sha256:` + hex SHA-256 over the JCS canonical JSON. */
export function fingerprint(value: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export const FINGERPRINT_PATTERN = /^sha256:[0-9a-f]{64}$/;
