import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';

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

// `<base64url JSON payload>.<base64url HMAC-SHA256>`; anything else is malformed syntax.
const CURSOR_SYNTAX = /^[A-Za-z0-9_-]{1,600}\.[A-Za-z0-9_-]{43}$/;
const DOMAIN = 'integration-inventory-cursor/v1';

/** The cursor MAC key, derived from the service secret and separated from its other uses. */
function macKey(secret: Buffer): Buffer {
  return createHmac('sha256', secret).update(DOMAIN).digest();
}

function mac(secret: Buffer, payload: string): Buffer {
  return createHmac('sha256', macKey(secret)).update(payload).digest();
}

/** An opaque, tamper-evident cursor (the unchanged `nextCursor` of the next request). */
export function encodeInventoryCursor(secret: Buffer, cursor: InventoryCursor): string {
  const payload: CursorPayload = { v: 1, view: cursor.view, ws: cursor.workspaceId, env: cursor.environmentId, after: cursor.afterId };
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${encoded}.${mac(secret, encoded).toString('base64url')}`;
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const payload = value as Record<string, unknown>;
  return payload.v === 1
    && (payload.view === 'canonical' || payload.view === 'compatibility')
    && typeof payload.ws === 'string'
    && (payload.env === null || typeof payload.env === 'string')
    && typeof payload.after === 'string';
}

/** Malformed cursor syntax is a query error (01 Errors: `invalid_inventory_query`). */
export function assertCursorSyntax(raw: string): void {
  if (!CURSOR_SYNTAX.test(raw)) throw new AppError('invalid_inventory_query');
}

/**
 * Decodes a cursor for the request that presents it (01 Errors): malformed syntax is 400
 * `invalid_inventory_query`; a well-formed cursor that fails its integrity check, is of an
 * unsupported version, or belongs to another workspace, view or filter is 400
 * `invalid_inventory_cursor`. Returns the id after which the page starts.
 */
export function decodeInventoryCursor(secret: Buffer, raw: string, expected: Omit<InventoryCursor, 'afterId'>): string {
  assertCursorSyntax(raw);
  const [encoded, presentedMac] = raw.split('.');
  // Compared as canonical text, so no two spellings of one MAC are both accepted.
  const presented = Buffer.from(presentedMac);
  const computed = Buffer.from(mac(secret, encoded).toString('base64url'));
  if (!timingSafeEqual(presented, computed)) throw new AppError('invalid_inventory_cursor');
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw new AppError('invalid_inventory_cursor');
  }
  if (!isPayload(payload)) throw new AppError('invalid_inventory_cursor');
  if (payload.ws !== expected.workspaceId || payload.view !== expected.view || payload.env !== expected.environmentId) {
    throw new AppError('invalid_inventory_cursor');
  }
  if (!hasIdForm(payload.after, payload.view === 'canonical' ? 'wint_' : 'int_')) throw new AppError('invalid_inventory_cursor');
  return payload.after;
}
