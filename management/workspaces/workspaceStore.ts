import type { Queryable } from '../../shared/db/pool.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { AppError } from '../../shared/errors/index.js';
import { newId } from '../../shared/ids.js';
import { DEVELOPER_ACTIVE_WORKSPACE_CAP } from './rules.js';

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
  const account = await db.query<{ plan: string; status: string }>('SELECT plan, status FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
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
  return { id, tenantId, accountId: input.accountId, name: input.name, slug: input.slug, model: input.model, status: 'active', active: input.active, environments };
}

export async function insertAccount(db: Queryable, input: { name: string; ownerUserId: string; now: Date }): Promise<{ id: string }> {
  const id = newId('acct_');
  await db.query('INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)', [id, input.name, input.now]);
  await db.query('INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3)', [id, input.ownerUserId, 'owner']);
  return { id };
}
