import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { RedisKeys } from '../../shared/redis.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';
import type { Deps } from '../deps.js';
import { activeWorkspaceLimit } from '../workspaces/rules.js';

export interface BillingAccountSummary {
  id: string;
  name: string;
  plan: string;
  status: 'active' | 'suspended';
  role: 'owner' | 'admin';
  activeWorkspaceCount: number;
  workspaceLimit: number | null;
}

/** Accounts the user owns or administers, with their active workspace count (01 GET /billing-accounts). */
export async function listBillingAccounts(deps: Deps, userId: string): Promise<BillingAccountSummary[]> {
  const { rows } = await deps.pool.query<{
    id: string;
    name: string;
    plan: string;
    status: 'active' | 'suspended';
    role: 'owner' | 'admin';
    active_count: number;
  }>(
    `SELECT a.id, a.name, a.plan, a.status, am.role,
            (SELECT count(*)::int FROM workspaces w WHERE w.account_id = a.id AND w.status = 'active') AS active_count
       FROM account_members am JOIN accounts a ON a.id = am.account_id
      WHERE am.user_id = $1
      ORDER BY a.created_at, a.id`,
    [userId],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    plan: row.plan,
    status: row.status,
    role: row.role,
    activeWorkspaceCount: row.active_count,
    workspaceLimit: activeWorkspaceLimit(row.plan),
  }));
}

export interface AccountUsage {
  accountId: string;
  period: string;
  periodStart: string;
  resetAt: string;
  mode: 'sandbox';
  total: number;
  limit: number;
  remaining: number;
  workspaces: { workspaceId: string; slug: string; total: number }[];
}

const counter = (raw: string | null | undefined): number => (raw && /^\d+$/.test(raw) ? Number(raw) : 0);

/**
 * The account's Sandbox usage in the current UTC calendar month (01 GET /billing-accounts/{id}/usage,
 * 03 Limits). Totals are the counters the ingest edge keeps in Redis; the limit is the account's
 * operator-set allowance or the configured default. Every workspace of the account is listed,
 * archived ones too, since usage survives archival.
 */
export async function accountUsage(deps: Deps, userId: string, accountId: string): Promise<AccountUsage> {
  if (!hasIdForm(accountId, 'acct_')) throw new AppError('invalid_billing_account_id');
  const account = await deps.pool.query<{ sandbox_monthly_allowance: number | null }>(
    `SELECT a.sandbox_monthly_allowance FROM accounts a JOIN account_members am ON am.account_id = a.id
      WHERE a.id = $1 AND am.user_id = $2`,
    [accountId, userId],
  );
  if (!account.rows[0]) throw new AppError('account_not_found');
  const workspaces = await deps.pool.query<{ id: string; slug: string }>(
    'SELECT id, slug FROM workspaces WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  const { period, periodStart, resetAt } = usagePeriodOf(deps.clock.now());
  const keys = [
    RedisKeys.sandboxMonthlyUsage(accountId, period),
    ...workspaces.rows.map((w) => RedisKeys.workspaceMonthlyUsage(accountId, w.id, period, 'sandbox')),
  ];
  const values = await deps.redis.mget(...keys);
  const total = counter(values[0]);
  const limit = account.rows[0].sandbox_monthly_allowance ?? deps.config.limits.sandboxMonthlyAllowance;
  return {
    accountId,
    period,
    periodStart: periodStart.toISOString(),
    resetAt: resetAt.toISOString(),
    mode: 'sandbox',
    total,
    limit,
    remaining: Math.max(0, limit - total),
    workspaces: workspaces.rows.map((w, index) => ({ workspaceId: w.id, slug: w.slug, total: counter(values[index + 1]) })),
  };
}
