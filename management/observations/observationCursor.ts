import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors/index.js';
import { openSignedCursor, signCursor } from '../pagination/signedCursor.js';
import { EVENT_ID } from './observationQuery.js';

/** The keyset position of the last observation served: the table's sort key after the connection. */
export interface ObservationPosition {
  receivedAtMs: number;
  eventId: string;
}

/** What a cursor is bound to (03 CLI API: workspace, exact connection and filters). */
export interface ObservationCursorScope {
  workspaceId: string;
  connectionId: string;
  /** The normalised filters, in a fixed order: from, to (epoch ms), eventType, operationKey, status. */
  filters: readonly (string | number | null)[];
}

interface CursorPayload {
  v: 1;
  ws: string;
  conn: string;
  /** Digest of the filters (keeps the cursor short whatever the filters hold). */
  f: string;
  at: number;
  id: string;
}

// The codec is the shared signed cursor (management/pagination/signedCursor.ts) under this domain.
const DOMAIN = 'observation-list-cursor/v1';

const filterDigest = (filters: ObservationCursorScope['filters']): string =>
  createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 22);

/** An opaque cursor: the unchanged `nextCursor` of the next request. */
export function encodeObservationCursor(secret: Buffer, scope: ObservationCursorScope, after: ObservationPosition): string {
  const payload: CursorPayload = {
    v: 1,
    ws: scope.workspaceId,
    conn: scope.connectionId,
    f: filterDigest(scope.filters),
    at: after.receivedAtMs,
    id: after.eventId,
  };
  return signCursor(secret, DOMAIN, payload);
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return (
    payload.v === 1
    && typeof payload.ws === 'string'
    && typeof payload.conn === 'string'
    && typeof payload.f === 'string'
    && Number.isSafeInteger(payload.at)
    && (payload.at as number) >= 0
    && typeof payload.id === 'string'
    && EVENT_ID.test(payload.id)
  );
}

/**
 * The position after which the page starts. A malformed, tampered or unsupported cursor, or one
 * issued for another workspace, connection or set of filters, is 400 `invalid_evidence_cursor`
 * (03: "reuse in another scope gives 400").
 */
export function decodeObservationCursor(secret: Buffer, raw: string, scope: ObservationCursorScope): ObservationPosition {
  const payload = openSignedCursor(secret, DOMAIN, raw);
  if (!isPayload(payload)) throw new AppError('invalid_evidence_cursor');
  if (payload.ws !== scope.workspaceId || payload.conn !== scope.connectionId || payload.f !== filterDigest(scope.filters)) {
    throw new AppError('invalid_evidence_cursor');
  }
  return { receivedAtMs: payload.at, eventId: payload.id };
}
