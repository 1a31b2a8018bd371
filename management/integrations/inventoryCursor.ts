import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { hasSignedCursorSyntax, openSignedCursor, signCursor } from '../pagination/signedCursor.js';

/** The two inventories a cursor can belong to (01 GET /v1/integrations). */
export type InventoryView = 'canonical' | 'compatibility';

/** What a cursor binds: one workspace, one view, one environment filter, and the last id served. */
export interface InventoryCursor {
  view: InventoryView;
  workspaceId: string;
  environmentId: string | null;
  afterId: string;
}

interface CursorPayload {
  v: 1;
  view: InventoryView;
  ws: string;
  env: string | null;
  after: string;
}

// The codec is the shared signed cursor (management/pagination/signedCursor.ts) under this domain.
const DOMAIN = 'integration-inventory-cursor/v1';

/** An opaque, tamper-evident cursor (the unchanged `nextCursor` of the next request). */
export function encodeInventoryCursor(secret: Buffer, cursor: InventoryCursor): string {
  const payload: CursorPayload = { v: 1, view: cursor.view, ws: cursor.workspaceId, env: cursor.environmentId, after: cursor.afterId };
  return signCursor(secret, DOMAIN, payload);
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return (
    payload.v === 1
    && (payload.view === 'canonical' || payload.view === 'compatibility')
    && typeof payload.ws === 'string'
    && (payload.env === null || typeof payload.env === 'string')
    && typeof payload.after === 'string'
  );
}

/** Malformed cursor syntax is a query error (01 Errors: `invalid_inventory_query`). */
export function assertCursorSyntax(raw: string): void {
  if (!hasSignedCursorSyntax(raw)) throw new AppError('invalid_inventory_query');
}

/**
 * Decodes a cursor for the request that presents it (01 Errors): malformed syntax is 400
 * `invalid_inventory_query`; a well-formed cursor that fails its integrity check, is of an
 * unsupported version, or belongs to another workspace, view or filter is 400
 * `invalid_inventory_cursor`. Returns the id after which the page starts.
 */
export function decodeInventoryCursor(secret: Buffer, raw: string, expected: Omit<InventoryCursor, 'afterId'>): string {
  assertCursorSyntax(raw);
  const payload = openSignedCursor(secret, DOMAIN, raw);
  if (!isPayload(payload)) throw new AppError('invalid_inventory_cursor');
  if (payload.ws !== expected.workspaceId || payload.view !== expected.view || payload.env !== expected.environmentId) {
    throw new AppError('invalid_inventory_cursor');
  }
  if (!hasIdForm(payload.after, payload.view === 'canonical' ? 'wint_' : 'int_')) throw new AppError('invalid_inventory_cursor');
  return payload.after;
}
