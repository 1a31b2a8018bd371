import { hasIdForm } from '../../shared/ids.js';
import { AppError } from '../../shared/errors/index.js';
import { constantTimeEqual, sha256Hex } from '../../shared/secrets.js';
import type { IngestCredential } from '../common/credential.js';
import type { CredentialCache } from './credentials.js';
import type { EdgeRequest } from '../common/edgeHttp.js';
import { isFresh, parseSignatureHeader, signatureMatches, type SignatureHeader } from './signature.js';

/** The ingest token form: `svc_ing_` + 43 base64url characters (00-decisions §4). */
const BEARER_TOKEN = /^Bearer (svc_ing_[A-Za-z0-9_-]{43})$/;

export interface Presented {
  connectionKey: string;
  token: string;
  signature: SignatureHeader;
}

export const unauthenticated = (reason?: 'malformed' | 'stale' | 'mismatch') =>
  new AppError('unauthenticated', reason ? { extra: { reason } } : {});

/**
 * The three headers of 03 Ingestion, checked for form before anything is looked up: a key or
 * token of the wrong form or a missing header is 401; a signature header that does not match
 * `t=<unix seconds>,v1=<64 lowercase hex>` (or is missing) is 401 with reason `malformed`.
 */
export function presentedCredentials(request: EdgeRequest): Presented {
  const connectionKey = request.headers['x-service-connection'];
  if (!hasIdForm(connectionKey, 'svc_conn_v1.')) throw unauthenticated();
  const bearer = BEARER_TOKEN.exec(request.headers.authorization ?? '');
  if (!bearer) throw unauthenticated();
  const signature = parseSignatureHeader(request.headers['x-service-signature']);
  if (!signature) throw unauthenticated('malformed');
  return { connectionKey, token: bearer[1], signature };
}

/** The bearer token is the binding's active token (SHA-256, constant-time comparison). */
export function tokenMatches(credential: IngestCredential | null, token: string): credential is IngestCredential {
  return credential?.usable === true && credential.tokenHash !== null && constantTimeEqual(sha256Hex(token), credential.tokenHash);
}

/**
 * Resolves the presented credentials to a usable binding. A refusal based on cached data is
 * confirmed against the current credential epoch first (a new token right after a rotation must
 * pass), so only failing requests may cost a Redis read.
 */
export async function resolveCredential(cache: CredentialCache, presented: Presented): Promise<IngestCredential> {
  const cached = await cache.get(presented.connectionKey);
  if (tokenMatches(cached, presented.token)) return cached;
  const current = cached === null ? null : await cache.refresh(cached);
  if (tokenMatches(current, presented.token)) return current;
  throw unauthenticated();
}

/** Freshness (reason `stale`) and the HMAC over `<t>.<raw body>` (reason `mismatch`). */
export function verifySignature(credential: IngestCredential, presented: Presented, rawBody: Buffer, nowMs: number): void {
  if (!isFresh(presented.signature, nowMs)) throw unauthenticated('stale');
  if (!signatureMatches(credential.hmacKey!, presented.signature, rawBody)) throw unauthenticated('mismatch');
}
