import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import type { Mode } from '../connections/connectionStore.js';
import { IN_PROGRESS_PROPOSAL_STATUSES } from './repairStore.js';

/** 03 Limits: Sandbox repair validations, 3 per UTC calendar month per account (used or reserved). */
export const SANDBOX_REPAIRS_PER_MONTH = 3;
/** 03 Limits: repair generation, 10 in-progress proposals per workspace. */
export const WORKSPACE_REPAIRS_IN_PROGRESS = 10;
/**
 * `Retry-After` of `sandbox_execution_busy`: a generation and its replay of at most 1,000 shapes
 * take seconds, so the next account job can usually start by then.
 */
export const SANDBOX_BUSY_RETRY_AFTER_SECONDS = 30;

/** The first instant of the UTC calendar month after `now`'s. */
function nextUtcMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

function thisUtcMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/**
 * The admission limits of a new proposal, counted in the caller's transaction, which holds the
 * account's repair lock (so two requests cannot both take the last place):
 * - Sandbox: one account job at a time (429 `sandbox_execution_busy` while a Sandbox proposal of
 *   the account is queued, generating or validating) and 3 proposals per UTC month, whatever
 *   became of them (429 `sandbox_repair_monthly_limit` `{limit, resetsAt}`, `Retry-After` to the
 *   reset);
 * - every mode: 10 proposals in progress per workspace (429 `repair_capacity_exceeded`, `Retry-After: 60`).
 */
export async function checkRepairCapacity(
  db: Queryable,
  input: { accountId: string; workspaceId: string; mode: Mode; now: Date },
): Promise<void> {
  if (input.mode === 'sandbox') {
    const { rows } = await db.query<{ busy: boolean; this_month: number }>(
      `SELECT EXISTS (SELECT 1 FROM repair_proposals WHERE account_id = $1 AND mode = 'sandbox' AND status = ANY($2)) AS busy,
              (SELECT count(*)::int FROM repair_proposals WHERE account_id = $1 AND mode = 'sandbox' AND created_at >= $3) AS this_month`,
      [input.accountId, IN_PROGRESS_PROPOSAL_STATUSES, thisUtcMonth(input.now)],
    );
    if (rows[0].busy) throw new AppError('sandbox_execution_busy', { retryAfterSeconds: SANDBOX_BUSY_RETRY_AFTER_SECONDS });
    if (rows[0].this_month >= SANDBOX_REPAIRS_PER_MONTH) {
      const resetsAt = nextUtcMonth(input.now);
      throw new AppError('sandbox_repair_monthly_limit', {
        extra: { limit: SANDBOX_REPAIRS_PER_MONTH, resetsAt: resetsAt.toISOString() },
        retryAfterSeconds: Math.max(1, Math.ceil((resetsAt.getTime() - input.now.getTime()) / 1000)),
      });
    }
  }
  const { rows } = await db.query<{ in_progress: number }>(
    'SELECT count(*)::int AS in_progress FROM repair_proposals WHERE workspace_id = $1 AND status = ANY($2)',
    [input.workspaceId, IN_PROGRESS_PROPOSAL_STATUSES],
  );
  if (rows[0].in_progress >= WORKSPACE_REPAIRS_IN_PROGRESS) throw new AppError('repair_capacity_exceeded');
}
