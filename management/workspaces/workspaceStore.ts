import type { Queryable } from '../../shared/db/pool.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { AppError } from '../../shared/errors/index.js';
import { newId } from '../../shared/ids.js';
import { DEVELOPER_ACTIVE_WORKSPACE_CAP, isWorkspaceSlug } from './rules.js';

export type WorkspaceModel = 'canonical' | 'legacy';
export type EnvironmentCategory = 'sandbox' | 'live' | 'development' | 'production' | 'staging';

export interface EnvironmentRecord {
  id: string;
  name: string;
  slug: string;
  category: EnvironmentCategory;
  mode: 'sandbox' | 'live';
  isDefault: boolean;
}

export interface WorkspaceRecord {
  id: string;
  tenantId: string;
  accountId: string;
  name: string;
  slug: string;
  model: WorkspaceModel;
  status: 'active' | 'archived';
  active: boolean;
  environments: EnvironmentRecord[];
}

/**
 * Canonical workspaces have Sandbox (default) and Live; legacy ones keep Development, Staging
 * and Production, classified Sandbox, Sandbox and Live (01 Environment).
 */
const ENVIRONMENTS: Record<WorkspaceModel, Omit<EnvironmentRecord, 'id'>[]> = {
  canonical: [
    { name: 'Sandbox', slug: 'sandbox', category: 'sandbox', mode: 'sandbox', isDefault: true },
    { name: 'Live', slug: 'live', category: 'live', mode: 'live', isDefault: false },
  ],
  legacy: [
    { name: 'Development', slug: 'development', category: 'development', mode: 'sandbox', isDefault: true },
    { name: 'Staging', slug: 'staging', category: 'staging', mode: 'sandbox', isDefault: false },
    { name: 'Production', slug: 'production', category: 'production', mode: 'live', isDefault: false },
  ],
};

/**
 * Locks the account row and enforces the Developer cap of active workspaces; call inside the
 * creation or restore transaction so concurrent requests cannot both pass (01 Workspace).
 */
export async function lockAccountWithinCap(db: Queryable, accountId: string): Promise<void> {
  const account = await db.query<{ plan: string; status: string }>('SELECT plan, status FROM accounts WHERE id = $1 FOR UPDATE', [
    accountId,
  ]);
  if (!account.rows[0]) throw new AppError('account_not_found');
  if (account.rows[0].status !== 'active') throw new AppError('account_unavailable');
  if (account.rows[0].plan !== 'developer') return;
  const { rows } = await db.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM workspaces WHERE account_id = $1 AND status = 'active'",
    [accountId],
  );
  if (rows[0].count >= DEVELOPER_ACTIVE_WORKSPACE_CAP) throw new AppError('workspace_limit_reached');
}

/** Creates a workspace with its environments and owner membership (caller holds the transaction). */
export async function insertWorkspace(
  db: Queryable,
  input: { accountId: string; ownerUserId: string; name: string; slug: string; model: WorkspaceModel; active: boolean; now: Date },
): Promise<WorkspaceRecord> {
  await lockAccountWithinCap(db, input.accountId);
  const id = newId('ws_');
  const tenantId = newId('ten_');
  try {
    await db.query(
      `INSERT INTO workspaces (id, tenant_id, account_id, name, slug, model, active, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [id, tenantId, input.accountId, input.name, input.slug, input.model, input.active, input.now],
    );
  } catch (error) {
    if (isUniqueViolation(error, 'workspaces_slug_key')) throw new AppError('workspace_slug_unavailable');
    throw error;
  }
  await db.query('INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)', [id, input.ownerUserId, 'owner']);
  const environments: EnvironmentRecord[] = [];
  for (const definition of ENVIRONMENTS[input.model]) {
    const environment = { id: newId('env_'), ...definition };
    await db.query(
      `INSERT INTO environments (id, workspace_id, name, slug, category, mode, is_default, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [environment.id, id, environment.name, environment.slug, environment.category, environment.mode, environment.isDefault, input.now],
    );
    environments.push(environment);
  }
  return {
    id,
    tenantId,
    accountId: input.accountId,
    name: input.name,
    slug: input.slug,
    model: input.model,
    status: 'active',
    active: input.active,
    environments,
  };
}

export async function insertAccount(db: Queryable, input: { name: string; ownerUserId: string; now: Date }): Promise<{ id: string }> {
  const id = newId('acct_');
  await db.query('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', [id, input.name, input.now]);
  await db.query('INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3)', [id, input.ownerUserId, 'owner']);
  return { id };
}

export type MemberRole = 'owner' | 'admin' | 'viewer';

/** One workspace as seen by one member. */
export interface MembershipRecord {
  workspaceId: string;
  tenantId: string;
  accountId: string;
  name: string;
  slug: string;
  status: 'active' | 'archived';
  active: boolean;
  role: MemberRole;
  /** The member owns or administers the workspace's billing account. */
  administersAccount: boolean;
}

interface MembershipRow {
  id: string;
  tenant_id: string;
  account_id: string;
  name: string;
  slug: string;
  status: 'active' | 'archived';
  active: boolean;
  role: MemberRole;
  administers_account: boolean;
}

const MEMBERSHIP_QUERY = `
  SELECT w.id, w.tenant_id, w.account_id, w.name, w.slug, w.status, w.active, m.role,
         EXISTS (SELECT 1 FROM account_members am WHERE am.account_id = w.account_id AND am.user_id = m.user_id) AS administers_account
    FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
   WHERE m.user_id = $1`;

function toMembership(row: MembershipRow): MembershipRecord {
  return {
    workspaceId: row.id,
    tenantId: row.tenant_id,
    accountId: row.account_id,
    name: row.name,
    slug: row.slug,
    status: row.status,
    active: row.active,
    role: row.role,
    administersAccount: row.administers_account,
  };
}

/** Every membership of a user, archived workspaces included, oldest workspace first. */
export async function listMemberships(db: Queryable, userId: string): Promise<MembershipRecord[]> {
  const { rows } = await db.query<MembershipRow>(`${MEMBERSHIP_QUERY} ORDER BY w.created_at, w.id`, [userId]);
  return rows.map(toMembership);
}

/**
 * The user's membership of the workspace with this slug, or null (missing workspace and
 * non-member look the same). `lock` takes the workspace row lock for a lifecycle change.
 */
export async function findMembership(
  db: Queryable,
  input: { slug: string; userId: string; lock?: boolean },
): Promise<MembershipRecord | null> {
  // A value that cannot be a slug names no workspace (and may hold bytes PostgreSQL refuses, such as NUL).
  if (!isWorkspaceSlug(input.slug)) return null;
  const sql = `${MEMBERSHIP_QUERY} AND w.slug = $2${input.lock ? ' FOR UPDATE OF w' : ''}`;
  const { rows } = await db.query<MembershipRow>(sql, [input.userId, input.slug]);
  return rows[0] ? toMembership(rows[0]) : null;
}

/** Environments of several workspaces, in creation order (Sandbox before Live). */
export async function listEnvironments(db: Queryable, workspaceIds: string[]): Promise<Map<string, EnvironmentRecord[]>> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    name: string;
    slug: string;
    category: EnvironmentCategory;
    mode: 'sandbox' | 'live';
    is_default: boolean;
  }>(
    'SELECT id, workspace_id, name, slug, category, mode, is_default FROM environments WHERE workspace_id = ANY($1) ORDER BY created_at, id',
    [workspaceIds],
  );
  const byWorkspace = new Map<string, EnvironmentRecord[]>();
  for (const row of rows) {
    const list = byWorkspace.get(row.workspace_id) ?? [];
    list.push({ id: row.id, name: row.name, slug: row.slug, category: row.category, mode: row.mode, isDefault: row.is_default });
    byWorkspace.set(row.workspace_id, list);
  }
  return byWorkspace;
}

/** Archives or restores a workspace and moves its authorization epoch; false when already there. */
export async function setWorkspaceStatus(
  db: Queryable,
  input: { workspaceId: string; status: 'active' | 'archived'; now: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE workspaces
        SET status = $2, archived_at = CASE WHEN $2 = 'archived' THEN $3::timestamptz END, auth_epoch = auth_epoch + 1
      WHERE id = $1 AND status <> $2`,
    [input.workspaceId, input.status, input.now],
  );
  return (rowCount ?? 0) > 0;
}

/** Connections of a workspace, whose cached credentials the ingest edge must drop on archive or restore. */
export async function listConnectionIds(db: Queryable, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM connections WHERE workspace_id = $1 AND deleted_at IS NULL', [
    workspaceId,
  ]);
  return rows.map((row) => row.id);
}
