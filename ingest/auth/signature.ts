import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** 03 Limits: the signature timestamp must be within 300 seconds of server time. */
export const SIGNATURE_WINDOW_SECONDS = 300;

/** `X-Service-Signature: t=<unix seconds>,v1=<64 lowercase hex>` (03 Ingestion, required headers). */
const SIGNATURE_HEADER = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/;

export interface SignatureHeader {
  /** The timestamp exactly as sent: it is part of the signed string. */
  timestamp: string;
  seconds: number;
  v1: Buffer;
}

/** The parsed header, or null when it does not match the format exactly (reason `malformed`). */
export function parseSignatureHeader(value: string | undefined): SignatureHeader | null {
  if (value === undefined) return null;
  const match = SIGNATURE_HEADER.exec(value);
  if (!match) return null;
  return { timestamp: match[1], seconds: Number(match[1]), v1: Buffer.from(match[2], 'hex') };
}

/** True when the signed timestamp is within the window of `nowMs` (either side; reason `stale` otherwise). */
export function isFresh(signature: SignatureHeader, nowMs: number): boolean {
  return Math.abs(Math.floor(nowMs / 1000) - signature.seconds) <= SIGNATURE_WINDOW_SECONDS;
}

/** HMAC-SHA256 over `<t>.<raw body bytes>` keyed with the ingest token. */
export function computeSignature(key: KeyObject | Buffer | string, timestamp: string, body: Buffer | string): Buffer {
  return createHmac('sha256', key).update(timestamp).update('.').update(body).digest();
}

/** Constant-time comparison of the sent signature with the computed one (reason `mismatch` when false). */
export function signatureMatches(key: KeyObject | Buffer | string, signature: SignatureHeader, body: Buffer): boolean {
  return timingSafeEqual(computeSignature(key, signature.timestamp, body), signature.v1);
}
