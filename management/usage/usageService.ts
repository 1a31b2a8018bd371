import { RedisKeys } from '../../shared/redis.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import type { AppDeps } from '../deps.js';

/** GET /v1/usage (00-decisions §5): the key's workspace's usage per mode this UTC calendar month. */
export interface WorkspaceUsage {
  workspaceId: string;
  accountId: string;
  /** `YYYY-MM` of the UTC calendar month (as GET /billing-accounts/{id}/usage). */
  period: string;
  periodStart: string;
  resetAt: string;
  sandbox: {
    /** This workspace's accepted Sandbox observations. */
    workspaceTotal: number;
    /** The account's total, which the pooled allowance is measured against (03 Limits). */
    accountTotal: number;
    limit: number;
    remaining: number;
    quotaEnforced: boolean;
  };
  live: {
    /** This workspace's accepted Live observations (03: metered without quota rejection). */
    workspaceTotal: number;
  };
}

const counter = (raw: string | null | undefined): number => (raw && /^\d+$/.test(raw) ? Number(raw) : 0);

/**
 * The counters the ingest edge keeps in Redis at admission (ingest/admission/): each new eventId
 * is counted once, in the account's Sandbox total and in its workspace's total of the connection's
 * mode; duplicates are never counted and a batch that was not written is released. The limit is
 * the account's operator-set allowance or the configured default (as management/billing). Other
 * workspaces of the account are not listed to a workspace key (docs/decisions/analysis.md); the console's
 * account usage route lists them to account administrators.
 */
export async function workspaceUsage(
  deps: AppDeps,
  principal: Pick<WorkspacePrincipal, 'workspaceId' | 'accountId'>,
): Promise<WorkspaceUsage> {
  const { period, periodStart, resetAt } = usagePeriodOf(deps.clock.now());
  const [account, values] = await Promise.all([
    deps.pool.query<{ sandbox_monthly_allowance: number | null }>('SELECT sandbox_monthly_allowance FROM accounts WHERE id = $1', [
      principal.accountId,
    ]),
    deps.redis.mget(
      RedisKeys.sandboxMonthlyUsage(principal.accountId, period),
      RedisKeys.workspaceMonthlyUsage(principal.accountId, principal.workspaceId, period, 'sandbox'),
      RedisKeys.workspaceMonthlyUsage(principal.accountId, principal.workspaceId, period, 'live'),
    ),
  ]);
  const limit = account.rows[0]?.sandbox_monthly_allowance ?? deps.config.limits.sandboxMonthlyAllowance;
  const accountTotal = counter(values[0]);
  return {
    workspaceId: principal.workspaceId,
    accountId: principal.accountId,
    period,
    periodStart: periodStart.toISOString(),
    resetAt: resetAt.toISOString(),
    sandbox: {
      workspaceTotal: counter(values[1]),
      accountTotal,
      limit,
      remaining: Math.max(0, limit - accountTotal),
      quotaEnforced: deps.config.limits.sandboxQuotaEnforced,
    },
    live: { workspaceTotal: counter(values[2]) },
  };
}
