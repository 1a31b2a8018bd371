import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { recheckAuthority } from '../auth/apiKeyAuth.js';
import type { WorkspacePrincipal, WorkspaceUserActor } from '../auth/principal.js';
import { recheckWorkspaceUser } from '../auth/workspaceUserAuth.js';
import type { WorkspaceScope } from '../auth/scopes.js';
import { findConnectionForWorkspace, type ConnectionRecord } from '../connections/connectionStore.js';

/**
 * Who calls the contract services: a `/v1` caller (API key, CLI or setup token), or a console
 * owner or admin through the session routes of `management/contracts/console/`.
 */
export type ContractCaller = WorkspacePrincipal | WorkspaceUserActor;

/**
 * The live connection named by a Contract API path (`{integrationId}` is its `int_` id, 01
 * Endpoints). A `wint_`, malformed, deleted or foreign id is 404 `integration_not_found`.
 */
export async function loadContractConnection(
  db: Queryable,
  principal: ContractCaller,
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
  principal: ContractCaller,
  scope: WorkspaceScope,
  nowMs: number,
): Promise<void> {
  if (principal.kind === 'workspace_user') {
    // The console owner or admin (02 Authentication 3): session, role and workspace still hold;
    // as for a key, a moved epoch changes nothing a contract write depends on.
    const lost = await recheckWorkspaceUser(db, principal, new Date(nowMs));
    if (lost === 'session') throw new AppError('unauthenticated');
    if (lost === 'role') throw new AppError('forbidden');
    if (lost === 'workspace') throw new AppError('workspace_unavailable');
    return;
  }
  const loss = await recheckAuthority(db, principal, scope, nowMs);
  if (loss === 'key') throw new AppError('insufficient_scope');
  if (loss === 'workspace') throw new AppError('unauthenticated');
}
