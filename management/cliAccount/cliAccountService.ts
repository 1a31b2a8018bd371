import type { Queryable } from '../../shared/db/pool.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { CliPrincipal } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { revokeCliClient } from '../oauth/cliTokens.js';
import { recordAudit } from '../operations/audit.js';
import { pageLimit } from '../pagination/pageLimit.js';
import { decodeAccountCursor, encodeAccountCursor, type AccountList } from './accountCursor.js';
import {
  currentWorkspaceIds,
  findUserName,
  lockOwnedClient,
  readClientPage,
  readWorkspacePage,
  type CliWorkspaceItem,
  type IdPage,
} from './cliAccountStore.js';

/** 03 CLI list pages: `limit` 1 to 100, default 25. */
export const DEFAULT_CLI_PAGE_LIMIT = 25;

/** The raw query of the account lists; values are strings (nothing coerced). */
export interface AccountListQuery {
  limit?: string;
  cursor?: string;
}

export interface Identity {
  user: { id: string; name: string };
  scopes: readonly string[];
}

/** 03 session item: owned CLI client metadata and whether it is the caller's own client. */
export interface CliSessionItem {
  id: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  current: boolean;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** 03 identity: the signed-in user and the scopes this client was granted. */
export async function readIdentity(deps: Deps, principal: CliPrincipal): Promise<Identity> {
  const name = await findUserName(deps.pool, principal.userId);
  // A token of a user that no longer exists authorizes nothing.
  if (name === null) throw new AppError('unauthenticated');
  return { user: { id: principal.userId, name }, scopes: principal.scopes };
}

/** Reads one page of an account list with its limit and cursor rules (03 Account routes). */
async function accountPage<T extends { id: string }>(
  deps: Deps,
  principal: CliPrincipal,
  list: AccountList,
  query: AccountListQuery,
  read: (input: { userId: string; after: string | null; limit: number }) => Promise<IdPage<T>>,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const secret = deps.config.secretEncryptionKey;
  const error = list === 'workspaces' ? 'invalid_workspace_query' : 'invalid_cli_session_query';
  const limit = pageLimit(query.limit, DEFAULT_CLI_PAGE_LIMIT, error);
  const after = query.cursor === undefined ? null : decodeAccountCursor(secret, list, principal.userId, query.cursor);
  const page = await read({ userId: principal.userId, after, limit });
  return {
    items: page.items,
    nextCursor: page.nextAfter === null ? null : encodeAccountCursor(secret, list, principal.userId, page.nextAfter),
  };
}

/** 03 GET /v1/cli/workspaces: active workspaces where the user is owner, admin or viewer. */
export function listCliWorkspaces(deps: Deps, principal: CliPrincipal, query: AccountListQuery): Promise<Page<CliWorkspaceItem>> {
  return accountPage(deps, principal, 'workspaces', query, (input) => readWorkspacePage(deps.pool, input));
}

/** 03 GET /v1/cli/sessions: the user's CLI clients that are not revoked; never tokens. */
export async function listCliSessions(deps: Deps, principal: CliPrincipal, query: AccountListQuery): Promise<Page<CliSessionItem>> {
  const page = await accountPage(deps, principal, 'sessions', query, (input) => readClientPage(deps.pool, input));
  return {
    nextCursor: page.nextCursor,
    items: page.items.map((client) => ({
      id: client.id,
      scopes: client.scopes,
      createdAt: client.createdAt.toISOString(),
      lastUsedAt: client.lastUsedAt ? client.lastUsedAt.toISOString() : null,
      current: client.id === principal.clientId,
    })),
  };
}

/**
 * Revokes a client (its consent, access and refresh tokens) and records it in every workspace
 * where the user is a current member (03: "audited in current workspaces"); a user with none gets
 * one row without a workspace, so no revocation goes unrecorded. The actor is the user; the
 * metadata names the route's reason and the client that asked.
 */
async function revokeAndAudit(
  db: Queryable,
  principal: CliPrincipal,
  clientId: string,
  reason: 'session_revocation' | 'logout',
  now: Date,
): Promise<void> {
  await revokeCliClient(db, clientId, now);
  const workspaceIds = await currentWorkspaceIds(db, principal.userId);
  for (const workspaceId of workspaceIds.length > 0 ? workspaceIds : [null]) {
    await recordAudit(db, {
      workspaceId,
      actorType: 'user',
      actorId: principal.userId,
      action: 'cli_client.revoke',
      targetId: clientId,
      metadata: { reason, actorClientId: principal.clientId },
      at: now,
    });
  }
}

/**
 * 03 DELETE /v1/cli/sessions/{clientId}: revokes one of the user's own CLI clients; another
 * user's client, or an id that names none, is 404 `cli_session_not_found`. Revoking a revoked
 * client of the user answers the same and writes nothing (a retried request is safe).
 */
export async function revokeCliSession(deps: Deps, principal: CliPrincipal, clientId: string): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.pool, async (db) => {
    const client = hasIdForm(clientId, 'clic_') ? await lockOwnedClient(db, principal.userId, clientId) : null;
    if (!client) throw new AppError('cli_session_not_found');
    if (client.revoked) return;
    await revokeAndAudit(db, principal, clientId, 'session_revocation', now);
  });
}

/**
 * 03 DELETE /v1/cli/session (logout): disables the caller's own client and revokes its consent,
 * access and refresh tokens; other clients of the user stay signed in.
 */
export async function logoutCliClient(deps: Deps, principal: CliPrincipal): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.pool, async (db) => {
    const client = await lockOwnedClient(db, principal.userId, principal.clientId);
    if (!client || client.revoked) return;
    await revokeAndAudit(db, principal, principal.clientId, 'logout', now);
  });
}
