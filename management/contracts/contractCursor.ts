import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { isCursorTimestamp, openSignedCursor, signCursor } from '../pagination/signedCursor.js';

/** The position after which the next page of a connection's contract list starts. */
export interface ContractListPosition {
  createdAt: Date;
  id: string;
}

interface CursorPayload {
  v: 1;
  conn: string;
  at: string;
  id: string;
}

const DOMAIN = 'contract-list-cursor/v1';

/** An opaque cursor bound to one connection (01: valid for one integration only). */
export function encodeContractCursor(secret: Buffer, connectionId: string, after: ContractListPosition): string {
  const payload: CursorPayload = { v: 1, conn: connectionId, at: after.createdAt.toISOString(), id: after.id };
  return signCursor(secret, DOMAIN, payload);
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return payload.v === 1 && typeof payload.conn === 'string' && isCursorTimestamp(payload.at) && hasIdForm(payload.id, 'cv_');
}

/**
 * 01 Contract API errors: a malformed, tampered or unsupported cursor, or one of another
 * integration, is 400 `invalid_contract_cursor`. Returns the position after which to list.
 */
export function decodeContractCursor(secret: Buffer, raw: string, connectionId: string): ContractListPosition {
  const payload = openSignedCursor(secret, DOMAIN, raw);
  if (!isPayload(payload) || payload.conn !== connectionId) throw new AppError('invalid_contract_cursor');
  return { createdAt: new Date(payload.at), id: payload.id };
}
