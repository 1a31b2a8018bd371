import type pg from 'pg';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { SessionPrincipal } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { reserveWorkspaceCreation } from './creationRateLimit.js';
import { slugFromName, validWorkspaceName, validWorkspaceSlug } from './rules.js';
import {
  insertAccount,
  insertWorkspace,
  listEnvironments,
  listMemberships,
  type EnvironmentRecord,
  type MemberRole,
  type MembershipRecord,
} from './workspaceStore.js';

/** The console's view of one workspace membership (01 Workspace summary + status + lifecycle flag). */
export interface WorkspaceSummary {
  id: string;
  tenantId: string;
  name: string;
  slug: string;
  role: MemberRole;
  active: boolean;
  status: 'active' | 'archived';
  environments: Omit<EnvironmentRecord, 'mode'>[];
  canManageLifecycle: boolean;
}

/** 01 Authentication 6: archive and restore need a workspace owner who also owns or administers its account. */
export function canManageLifecycle(membership: Pick<MembershipRecord, 'role' | 'administersAccount'>): boolean {
  return membership.role === 'owner' && membership.administersAccount;
}

function toSummary(membership: MembershipRecord, environments: EnvironmentRecord[]): WorkspaceSummary {
  return {
    id: membership.workspaceId,
    tenantId: membership.tenantId,
    name: membership.name,
    slug: membership.slug,
    role: membership.role,
    active: membership.active,
    status: membership.status,
    environments: environments.map(({ id, name, slug, category, isDefault }) => ({ id, name, slug, category, isDefault })),
    canManageLifecycle: canManageLifecycle(membership),
  };
}

export async function listWorkspaces(deps: Deps, userId: string): Promise<WorkspaceSummary[]> {
  const memberships = await listMemberships(deps.pool, userId);
  const environments = await listEnvironments(
    deps.pool,
    memberships.map((m) => m.workspaceId),
  );
  return memberships.map((m) => toSummary(m, environments.get(m.workspaceId) ?? []));
}

export interface CreateWorkspaceInput {
  name: string;
  slug?: string;
  billingAccountId?: string;
}

/**
 * The account a new workspace goes under (01 POST /workspaces): the named one when the user owns
 * or administers it (else 404); the only one; none yet → a first Developer account; several
 * without a choice → 400 `account_required`. Runs under a per-user lock so two first creations
 * cannot make two first accounts.
 */
async function resolveAccount(db: pg.PoolClient, user: SessionPrincipal, billingAccountId: string | undefined, now: Date): Promise<string> {
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`user-accounts:${user.userId}`]);
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM account_members WHERE user_id = $1 ORDER BY account_id', [
    user.userId,
  ]);
  const accountIds = rows.map((row) => row.account_id);
  if (billingAccountId !== undefined) {
    if (!accountIds.includes(billingAccountId)) throw new AppError('account_not_found');
    return billingAccountId;
  }
  if (accountIds.length > 1) throw new AppError('account_required');
  if (accountIds.length === 1) return accountIds[0];
  const owner = await db.query<{ name: string }>('SELECT name FROM users WHERE id = $1', [user.userId]);
  return (await insertAccount(db, { name: `${owner.rows[0].name}'s account`, ownerUserId: user.userId, now })).id;
}

/**
 * Creates a canonical workspace (Sandbox default, Live) with the caller as owner, inactive until
 * the console activates it. Role, tenant id and plan come from the server. The account role, its
 * status and the Developer cap are checked inside the transaction under the account row lock;
 * the creation budget is taken last, just before COMMIT, so only creations that commit count.
 */
export async function createWorkspace(deps: Deps, user: SessionPrincipal, input: CreateWorkspaceInput): Promise<WorkspaceSummary> {
  const name = validWorkspaceName(input.name);
  const slug = validWorkspaceSlug(input.slug ?? slugFromName(name));
  if (input.billingAccountId !== undefined && !hasIdForm(input.billingAccountId, 'acct_')) throw new AppError('invalid_billing_account_id');
  const now = deps.clock.now();
  let release: (() => Promise<void>) | undefined;
  try {
    return await withTransaction(deps.pool, async (db) => {
      if (release) await release(); // a retried transaction gives back the slot of its first attempt
      release = undefined;
      const accountId = await resolveAccount(db, user, input.billingAccountId, now);
      const workspace = await insertWorkspace(db, {
        accountId,
        ownerUserId: user.userId,
        name,
        slug,
        model: 'canonical',
        active: false,
        now,
      });
      await recordAudit(db, {
        workspaceId: workspace.id,
        actorType: 'user',
        actorId: user.userId,
        action: 'workspace.create',
        targetId: workspace.id,
        metadata: { slug, accountId },
        at: now,
      });
      const slot = await reserveWorkspaceCreation(deps.redis, {
        userId: user.userId,
        limit: deps.config.workspaceCreationsPerHour,
        nowMs: deps.clock.nowMs(),
      });
      release = slot.release;
      return toSummary({ ...workspace, workspaceId: workspace.id, role: 'owner', administersAccount: true }, workspace.environments);
    });
  } catch (error) {
    // A slot is only kept by a creation that committed.
    await release?.().catch(() => undefined);
    throw error;
  }
}
