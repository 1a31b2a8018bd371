// Keyed hashes of ids (correlation ids, business object ids): HMAC-SHA256 with a key private to
// the sender, so that the service can match equal ids without ever learning them.

import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** Prefix naming the algorithm of every hash this library writes. */
export const KEYED_HASH_PREFIX = 'hmac-sha256:';

/** Version of the hashing scheme, appended to the namespace (`<namespace>/v1`). */
export const HASH_SCHEME_VERSION = 'v1';

/** The edge accepts a hashNamespace of 1–128 printable ASCII characters without spaces. */
const NAMESPACE = /^[\x21-\x7E]{1,125}$/;

/** `<namespace>/v1`, or null when the namespace could not be sent. */
export function hashNamespaceOf(namespace: string | undefined): string | null {
  const name = namespace ?? 'default';
  return typeof name === 'string' && NAMESPACE.test(name) ? `${name}/${HASH_SCHEME_VERSION}` : null;
}

export type KeyedHasher = (value: string) => string;

/** A hasher keyed with `key`, or with 32 random bytes of this process when no key is given. */
export function createKeyedHasher(key?: string | Uint8Array): KeyedHasher {
  const secret: KeyObject = createSecretKey(
    key === undefined ? randomBytes(32) : typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key),
  );
  return (value) => KEYED_HASH_PREFIX + createHmac('sha256', secret).update(value, 'utf8').digest('hex');
}
