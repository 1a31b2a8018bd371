import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { StoredOperation } from '../operations/idempotency.js';
import { findConnectionForWorkspace, type ConnectionRecord } from './connectionStore.js';

/**
 * The workspace's live connection named by a runtime `int_` id, or 404 `connection_not_found`:
 * a `wint_` or malformed id, and another workspace's connection, are simply not found.
 * `forUpdate` takes the row lock that serialises configuration and credential changes.
 */
export async function loadWorkspaceConnection(
  db: Queryable,
  workspaceId: string,
  connectionId: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConnectionRecord> {
  const connection = hasIdForm(connectionId, 'int_') ? await findConnectionForWorkspace(db, workspaceId, connectionId, options) : null;
  if (!connection) throw new AppError('connection_not_found');
  return connection;
}

/**
 * An empty path segment (`/v1/cli/connections//incidents`) names no connection: 400
 * `connection_required`, as a `/v1` read without `integrationId` (03: no omitted connection can
 * yield workspace-wide evidence).
 */
export function requirePathConnection(connectionId: string): void {
  if (connectionId === '') throw new AppError('connection_required');
}

/**
 * Whether a stored connection receipt is historical now: its connection was deleted or no longer
 * has the revision the receipt recorded (01 and 02 receipts: computed from current state).
 */
export async function isHistoricalReceipt(db: Queryable, workspaceId: string, stored: StoredOperation): Promise<boolean> {
  const current = stored.connection_id
    ? await findConnectionForWorkspace(db, workspaceId, stored.connection_id, { includeDeleted: true })
    : null;
  return !current || current.deletedAt !== null || current.revision !== stored.recorded_revision;
}
