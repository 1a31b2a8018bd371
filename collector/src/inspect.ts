// What an observed body's structure is: its shape when it can be read as JSON within the limits,
// else "not inspected" (the envelope then says `schemaInspected: false` with a placeholder shape).

import { TextDecoder } from 'node:util';
import type { ShapeDigest } from './fingerprint.js';
import type { ObservedBody } from './types.js';

export type Inspection = { inspected: true; digest: ShapeDigest } | { inspected: false };

const NOT_INSPECTED: Inspection = Object.freeze({ inspected: false });
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** `application/json` and `application/<anything>+json`, parameters ignored, any case. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = contentType.split(';', 1)[0].trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

/** Whether a string's UTF-8 form may exceed `max` bytes (exact only when it could). */
function utf8LongerThan(text: string, max: number): boolean {
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  return Buffer.byteLength(text, 'utf8') > max;
}

/**
 * Never throws: a body that cannot be read is not inspected. `digestOf` gives the digest of a
 * JSON value's shape (ShapeCache.digestOf for the observation's operation).
 */
export function inspectBody(
  body: ObservedBody | undefined,
  maxInspectedBodyBytes: number,
  digestOf: (value: unknown) => ShapeDigest,
): Inspection {
  try {
    if (body === undefined || body === null || typeof body !== 'object') return NOT_INSPECTED;
    if ('json' in body) {
      if (body.json === undefined) return NOT_INSPECTED;
      return { inspected: true, digest: digestOf(body.json) };
    }
    if ('raw' in body) {
      const { raw, contentType } = body;
      if (contentType !== undefined && (typeof contentType !== 'string' || !isJsonContentType(contentType))) return NOT_INSPECTED;
      let text: string;
      if (typeof raw === 'string') {
        if (utf8LongerThan(raw, maxInspectedBodyBytes)) return NOT_INSPECTED;
        text = raw;
      } else if (raw instanceof Uint8Array) {
        if (raw.byteLength > maxInspectedBodyBytes) return NOT_INSPECTED;
        text = utf8.decode(raw);
      } else {
        return NOT_INSPECTED;
      }
      return { inspected: true, digest: digestOf(JSON.parse(text)) };
    }
    return NOT_INSPECTED;
  } catch {
    // Unparsable JSON, invalid UTF-8, a throwing getter, too many values to read.
    return NOT_INSPECTED;
  }
}
