import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { recheckAuthority } from '../auth/apiKeyAuth.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import type { WorkspaceScope } from '../auth/scopes.js';
import { findConnectionForWorkspace, type ConnectionRecord } from '../connections/connectionStore.js';

/**
 * The live connection named by a Contract API path (`{integrationId}` is its `int_` id, 01
 * Endpoints). A `wint_`, malformed, deleted or foreign id is 404 `integration_not_found`.
 */
export async function loadContractConnection(
  db: Queryable,
  principal: WorkspacePrincipal,
  integrationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConnectionRecord> {
  if (!hasIdForm(integrationId, 'int_')) throw new AppError('integration_not_found');
  const connection = await findConnectionForWorkspace(db, principal.workspaceId, integrationId, options);
  if (!connection) throw new AppError('integration_not_found');
  return connection;
}

/** A version id of the path: anything but a `cv_` id is simply not found. */
export function requireVersionIdForm(contractVersionId: string): void {
  if (!hasIdForm(contractVersionId, 'cv_')) throw new AppError('contract_not_found');
}

/**
 * Authority re-checked inside a contract write transaction (01 Authentication 7): a key revoked,
 * expired or stripped of the scope meanwhile is 403 `insufficient_scope`; an archived workspace
 * fails authentication (401). An authorization epoch that moved while the workspace stayed active
 * changes nothing a contract write depends on.
 */
export async function recheckContractAuthority(
  db: Queryable,
  principal: WorkspacePrincipal,
  scope: WorkspaceScope,
  nowMs: number,
): Promise<void> {
  const loss = await recheckAuthority(db, principal, scope, nowMs);
  if (loss === 'key') throw new AppError('insufficient_scope');
  if (loss === 'workspace') throw new AppError('unauthenticated');
}
