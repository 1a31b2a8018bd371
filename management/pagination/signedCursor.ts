import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The one codec of opaque list cursors: `<base64url JSON payload>.<base64url HMAC-SHA256>`.
 * Each list names its own `domain`, which separates its MAC key from every other use of the
 * service secret, so a cursor of one list can never verify as a cursor of another. What a
 * payload binds (workspace, connection, view, position) is the caller's business.
 */

const CURSOR_SYNTAX = /^[A-Za-z0-9_-]{1,600}\.[A-Za-z0-9_-]{43}$/;

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A position's timestamp in a cursor payload: `toISOString()` text of a real instant. */
export function isCursorTimestamp(value: unknown): value is string {
  return typeof value === 'string' && ISO_MILLIS.test(value) && !Number.isNaN(Date.parse(value));
}

/** True when `raw` has the cursor form (payload and MAC), whatever its content. */
export function hasSignedCursorSyntax(raw: string): boolean {
  return CURSOR_SYNTAX.test(raw);
}

/** The cursor MAC key, derived from the service secret and the list's domain. */
function macKey(secret: Buffer, domain: string): Buffer {
  return createHmac('sha256', secret).update(domain).digest();
}

function mac(secret: Buffer, domain: string, payload: string): Buffer {
  return createHmac('sha256', macKey(secret, domain)).update(payload).digest();
}

/** Signs a JSON payload into an opaque cursor. */
export function signCursor(secret: Buffer, domain: string, payload: object): string {
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${encoded}.${mac(secret, domain, encoded).toString('base64url')}`;
}

/**
 * The payload of a cursor signed for `domain`, or null when its syntax, its MAC or its JSON is
 * wrong. The caller checks the payload's version and binding.
 */
export function openSignedCursor(secret: Buffer, domain: string, raw: string): unknown {
  if (!hasSignedCursorSyntax(raw)) return null;
  const [encoded, presentedMac] = raw.split('.');
  // Compared as canonical text, so no two spellings of one MAC are both accepted.
  const presented = Buffer.from(presentedMac);
  const computed = Buffer.from(mac(secret, domain, encoded).toString('base64url'));
  if (!timingSafeEqual(presented, computed)) return null;
  try {
    return JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}
