// Body inspection shared by the helpers: which bodies are JSON, bounded reading, decoding and
// parsing off the host's path. Every function here returns a verdict and never throws.

import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { isJsonContentType } from '../inspect.js';
import type { ObservedBody } from '../types.js';

/** Default bound of an inspected body (the collector's default `maxInspectedBodyBytes`). */
export const DEFAULT_MAX_BYTES = 256 * 1024;

export type NotInspected = Extract<ObservedBody, { notInspected: unknown }>['notInspected'];
export const notInspected = (reason: NotInspected): ObservedBody => ({ notInspected: reason });

// The core's rule for raw bodies, so that a helper and `observe({raw})` agree on what is JSON.
export { isJsonContentType };

/** A Content-Length value as a number, or undefined when absent or not a plain decimal. */
export function contentLength(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : undefined;
}

/** The first value of a header in a Node-style header object (case-insensitive names already lower-cased). */
export function headerValue(headers: unknown, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const value = (headers as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

type Decoder = (bytes: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>;
const DECODERS: Record<string, Decoder> = { gzip: gunzip, 'x-gzip': gunzip, deflate: inflate, br: brotli };

/** Whether the library can read a body of this Content-Encoding (identity, gzip, deflate, br). */
export function decodableEncoding(encoding: string | undefined): boolean {
  if (!encoding) return true;
  return encoding
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .every((part) => part === '' || part === 'identity' || part in DECODERS);
}

/**
 * Parses received bytes (decoded from their Content-Encoding, asynchronously, with the decoded
 * size bounded by maxBytes) as JSON. Resolves to the verdict; never rejects.
 */
export async function parseJsonBytes(bytes: Buffer, encoding: string | undefined, maxBytes: number): Promise<ObservedBody> {
  let decoded = bytes;
  try {
    if (encoding) {
      // Content-Encoding lists codings in the order they were applied: undo them last first.
      const codings = encoding
        .split(',')
        .map((part) => part.trim().toLowerCase())
        .filter((part) => part !== '' && part !== 'identity');
      for (const coding of codings.reverse()) {
        const decoder = DECODERS[coding];
        if (!decoder) return notInspected('error');
        decoded = await decoder(decoded, { maxOutputLength: maxBytes });
      }
    }
  } catch (error) {
    return (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' ? notInspected('too-large') : notInspected('error');
  }
  if (decoded.length > maxBytes) return notInspected('too-large');
  return parseJsonText(decoded.toString('utf8'));
}

/** JSON text as an inspected body, or `not-json` when it does not parse. */
export function parseJsonText(text: string): ObservedBody {
  if (text.trim() === '') return notInspected('absent');
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return notInspected('not-json');
  }
}

/**
 * A body a server framework already read: a parsed value (when the content type is JSON), or
 * bytes or text to parse (a raw-body parser, kept for signature checks), within maxBytes.
 */
export function serverBody(
  body: unknown,
  contentType: string | undefined,
  declaredLength: number | undefined,
  maxBytes: number,
): ObservedBody {
  if (declaredLength !== undefined && declaredLength > maxBytes) return notInspected('too-large');
  if (body === undefined || (body === null && declaredLength === undefined)) return notInspected('absent');
  if (!isJsonContentType(contentType)) return notInspected('not-json');
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    if (size > maxBytes) return notInspected('too-large');
    return parseJsonText(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  }
  return { json: body };
}
