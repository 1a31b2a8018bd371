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
  return canonicalFingerprint(canonicalJson(value));
}

/** The fingerprint of a value whose canonical JSON is already at hand. */
export function canonicalFingerprint(canonical: string): string {
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

export const FINGERPRINT_PATTERN = /^sha256:[0-9a-f]{64}$/;
