import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { Mode } from '../connections/connectionStore.js';
import { openSignedCursor, signCursor } from '../pagination/signedCursor.js';
import type { IncidentListPosition, IncidentStatus } from './incidentStore.js';

/** What one incident list is: a cursor of one list is refused by every other (03 list rules). */
export interface IncidentListBinding {
  workspaceId: string;
  connectionId: string;
  mode: Mode;
  /** The status filter, or null for both statuses. */
  status: IncidentStatus | null;
}

interface CursorPayload {
  v: 1;
  ws: string;
  conn: string;
  mode: Mode;
  status: IncidentStatus | null;
  at: string;
  id: string;
}

/**
 * Who reads the list: the `/v1` read of API keys, the CLI's connection read or the console's
 * incidents page. Each has its own cursor domain, so a cursor is bound to the route that issued
 * it as well as to its list.
 */
export type IncidentListReader = 'api_key' | 'cli' | 'console';

const DOMAINS: Record<IncidentListReader, string> = {
  api_key: 'incident-list-cursor/v1',
  cli: 'cli-incident-list-cursor/v1',
  console: 'console-incident-list-cursor/v1',
};
const MICROS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** An opaque cursor bound to workspace, connection, mode and status filter. */
export function encodeIncidentCursor(
  secret: Buffer,
  reader: IncidentListReader,
  binding: IncidentListBinding,
  after: IncidentListPosition,
): string {
  const payload: CursorPayload = {
    v: 1,
    ws: binding.workspaceId,
    conn: binding.connectionId,
    mode: binding.mode,
    status: binding.status,
    at: after.createdAt,
    id: after.id,
  };
  return signCursor(secret, DOMAINS[reader], payload);
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return (
    payload.v === 1
    && typeof payload.at === 'string'
    && MICROS_UTC.test(payload.at)
    && !Number.isNaN(Date.parse(payload.at))
    && hasIdForm(payload.id, 'inc_')
  );
}

/**
 * 03 list rules: a malformed, tampered or unsupported cursor, or one issued by another reader or
 * for another workspace, connection, mode or status filter, is 400 `invalid_incident_cursor`. Returns the
 * position after which to list.
 */
export function decodeIncidentCursor(
  secret: Buffer,
  reader: IncidentListReader,
  raw: string,
  binding: IncidentListBinding,
): IncidentListPosition {
  const payload = openSignedCursor(secret, DOMAINS[reader], raw);
  if (
    !isPayload(payload)
    || payload.ws !== binding.workspaceId
    || payload.conn !== binding.connectionId
    || payload.mode !== binding.mode
    || payload.status !== binding.status
  ) {
    throw new AppError('invalid_incident_cursor');
  }
  return { createdAt: payload.at, id: payload.id };
}
