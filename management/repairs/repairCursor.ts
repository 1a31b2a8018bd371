import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { openSignedCursor, signCursor } from '../pagination/signedCursor.js';
import type { ListPosition } from './repairStore.js';

/**
 * The two lists of an incident's repair evidence (03 Evidence reads). Each has its own cursor
 * domain (so a cursor of one never verifies as the other's) and the id prefix of its items.
 */
export type RepairListKind = 'proposals' | 'datasets';

const DOMAINS: Record<RepairListKind, string> = {
  proposals: 'cli-repair-proposal-list-cursor/v1',
  datasets: 'cli-replay-dataset-list-cursor/v1',
};
const ITEM_PREFIX: Record<RepairListKind, 'rp_' | 'rds_'> = { proposals: 'rp_', datasets: 'rds_' };

/** What one list is: 03 binds a cursor to workspace, exact connection and incident (the lists have no filters). */
export interface RepairListBinding {
  workspaceId: string;
  connectionId: string;
  incidentId: string;
}

interface CursorPayload {
  v: 1;
  ws: string;
  conn: string;
  inc: string;
  at: string;
  id: string;
}

const MICROS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeRepairCursor(secret: Buffer, kind: RepairListKind, binding: RepairListBinding, after: ListPosition): string {
  const payload: CursorPayload = {
    v: 1,
    ws: binding.workspaceId,
    conn: binding.connectionId,
    inc: binding.incidentId,
    at: after.createdAt,
    id: after.id,
  };
  return signCursor(secret, DOMAINS[kind], payload);
}

function isPayload(kind: RepairListKind, value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return (
    payload.v === 1
    && typeof payload.at === 'string'
    && MICROS_UTC.test(payload.at)
    && !Number.isNaN(Date.parse(payload.at))
    && hasIdForm(payload.id, ITEM_PREFIX[kind])
  );
}

/**
 * 03 list rules: a malformed, tampered or unsupported cursor, or one issued by the other list or
 * for another workspace, connection or incident, is 400 `invalid_evidence_cursor`. Returns the
 * position after which to list.
 */
export function decodeRepairCursor(secret: Buffer, kind: RepairListKind, raw: string, binding: RepairListBinding): ListPosition {
  const payload = openSignedCursor(secret, DOMAINS[kind], raw);
  if (
    !isPayload(kind, payload)
    || payload.ws !== binding.workspaceId
    || payload.conn !== binding.connectionId
    || payload.inc !== binding.incidentId
  ) {
    throw new AppError('invalid_evidence_cursor');
  }
  return { createdAt: payload.at, id: payload.id };
}
