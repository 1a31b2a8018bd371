import type { Queryable } from '../../shared/db/pool.js';
import type { MemberRole } from '../workspaces/workspaceStore.js';
import { CLI_OAUTH_CLIENT_ID } from '../oauth/rules.js';

/** 03 workspace item: a workspace the user currently holds a role in. */
export interface CliWorkspaceItem {
  id: string;
  slug: string;
  name: string;
  role: MemberRole;
}

/** A CLI client (one device-grant authorization) of the user, without any token material. */
export interface CliClientRecord {
  id: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface IdPage<T> {
  items: T[];
  /** The id after which the next page starts, when there is one. */
  nextAfter: string | null;
}

function pageOf<T extends { id: string }>(rows: T[], limit: number): IdPage<T> {
  const items = rows.slice(0, limit);
  return { items, nextAfter: rows.length > limit ? items[items.length - 1].id : null };
}

export async function findUserName(db: Queryable, userId: string): Promise<string | null> {
  const { rows } = await db.query<{ name: string }>('SELECT name FROM users WHERE id = $1', [userId]);
  return rows[0]?.name ?? null;
}

/**
 * The user's memberships of active workspaces, by id (ids are time-ordered: oldest first), after
 * `after`. Reads `limit + 1` rows so the caller knows whether another page follows.
 */
export async function readWorkspacePage(
  db: Queryable,
  input: { userId: string; after: string | null; limit: number },
): Promise<IdPage<CliWorkspaceItem>> {
  const { rows } = await db.query<CliWorkspaceItem>(
    `SELECT w.id, w.slug, w.name, m.role
       FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
      WHERE m.user_id = $1 AND w.status = 'active'
        AND ($2::text IS NULL OR w.id COLLATE "C" > $2::text)
      ORDER BY w.id COLLATE "C"
      LIMIT $3`,
    [input.userId, input.after, input.limit + 1],
  );
  return pageOf(rows, input.limit);
}

/** The ids of the active workspaces where the user is a current member (audit of account actions). */
export async function currentWorkspaceIds(db: Queryable, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT w.id FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
      WHERE m.user_id = $1 AND w.status = 'active'
      ORDER BY w.id COLLATE "C"`,
    [userId],
  );
  return rows.map((row) => row.id);
}

interface ClientRow {
  id: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
}

/** The user's CLI clients that are not revoked, by id (oldest first), after `after`; setup grants are not CLI sessions. */
export async function readClientPage(
  db: Queryable,
  input: { userId: string; after: string | null; limit: number },
): Promise<IdPage<CliClientRecord>> {
  const { rows } = await db.query<ClientRow>(
    `SELECT id, scopes, created_at, last_used_at
       FROM cli_clients
      WHERE user_id = $1 AND revoked_at IS NULL AND oauth_client_id = '${CLI_OAUTH_CLIENT_ID}'
        AND ($2::text IS NULL OR id COLLATE "C" > $2::text)
      ORDER BY id COLLATE "C"
      LIMIT $3`,
    [input.userId, input.after, input.limit + 1],
  );
  const page = pageOf(rows, input.limit);
  return {
    nextAfter: page.nextAfter,
    items: page.items.map((row) => ({ id: row.id, scopes: row.scopes, createdAt: row.created_at, lastUsedAt: row.last_used_at })),
  };
}

/**
 * The user's own CLI client by exact id, locked for its revocation, or null (another user's
 * client is indistinguishable from a missing one). `revoked` says whether it is revoked already.
 */
export async function lockOwnedClient(db: Queryable, userId: string, clientId: string): Promise<{ revoked: boolean } | null> {
  const { rows } = await db.query<{ revoked_at: Date | null }>(
    `SELECT revoked_at FROM cli_clients WHERE id = $1 AND user_id = $2 AND oauth_client_id = '${CLI_OAUTH_CLIENT_ID}' FOR UPDATE`,
    [clientId, userId],
  );
  return rows[0] ? { revoked: rows[0].revoked_at !== null } : null;
}
