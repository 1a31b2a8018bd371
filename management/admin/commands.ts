import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { advanceTestClock, resetTestClock } from '../../shared/clock.js';
import { runningProcesses } from '../../shared/processRegistry.js';
import { RedisKeys } from '../../shared/redis.js';
import { insertApiKey, revokeApiKey } from '../apiKeys/apiKeyStore.js';
import { validLifetime } from '../apiKeys/rules.js';
import type { Deps } from '../deps.js';
import { setWritePause } from '../maintenance.js';
import { recordAudit } from '../operations/audit.js';
import { isWorkspaceSlug } from '../workspaces/rules.js';
import { bootstrap, parseScopes, type BootstrapInput, type BootstrapResult } from './bootstrap.js';
import { CommandError } from './commandError.js';

/**
 * Operator commands (00-decisions §2), each a function of Deps so tests run them in-process;
 * `cli.ts` only parses arguments and wires the stores. Operator writes are audited with
 * `actor_type = operator`.
 */

export interface CreatedKeyOutput {
  id: string;
  key: string;
  scopes: string[];
  expiresAt: string | null;
}

/** `create-api-key --workspace SLUG --scopes s1,s2|all [--expires-in SECONDS]`. */
export async function createApiKeyCommand(
  deps: Deps,
  input: { workspace: string; scopes: string[] | 'all'; expiresInSeconds?: number },
): Promise<CreatedKeyOutput> {
  const scopes = parseScopes(input.scopes);
  const lifetime = validLifetime(input.expiresInSeconds);
  const now = deps.clock.now();
  if (!isWorkspaceSlug(input.workspace)) throw new AppError('workspace_not_found');
  return withTransaction(deps.pool, async (db) => {
    const { rows } = await db.query<{ id: string; status: string }>('SELECT id, status FROM workspaces WHERE slug = $1 FOR UPDATE', [
      input.workspace,
    ]);
    if (!rows[0]) throw new AppError('workspace_not_found');
    if (rows[0].status !== 'active') throw new AppError('workspace_unavailable');
    const expiresAt = lifetime === null ? null : new Date(now.getTime() + lifetime * 1000);
    const key = await insertApiKey(db, { workspaceId: rows[0].id, scopes, expiresAt, createdBy: 'operator', now });
    await recordAudit(db, {
      workspaceId: rows[0].id,
      actorType: 'operator',
      actorId: null,
      action: 'api_key.create',
      targetId: key.id,
      metadata: { scopes, expiresAt: key.expiresAt },
      at: now,
    });
    return { id: key.id, key: key.key, scopes: key.scopes, expiresAt: key.expiresAt };
  });
}

/** `revoke-api-key --id ID`; a key already revoked answers the same and writes nothing. */
export async function revokeApiKeyCommand(deps: Deps, input: { id: string }): Promise<{ revoked: true }> {
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    const { rows } = hasIdForm(input.id, 'key_')
      ? await db.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys WHERE id = $1 FOR UPDATE', [input.id])
      : { rows: [] };
    if (!rows[0]) throw new AppError('api_key_not_found');
    if (await revokeApiKey(db, { id: input.id, now })) {
      await recordAudit(db, {
        workspaceId: rows[0].workspace_id,
        actorType: 'operator',
        actorId: null,
        action: 'api_key.revoke',
        targetId: input.id,
        at: now,
      });
    }
    return { revoked: true as const };
  });
}

/** `maintenance pause|resume`: authenticated writes answer 503 `mode_cutover_write_paused` while paused. */
export async function maintenanceCommand(deps: Deps, action: 'pause' | 'resume'): Promise<{ paused: boolean }> {
  return { paused: await setWritePause(deps.redis, action === 'pause') };
}

/**
 * `clock advance --ms N` / `clock reset` (00-decisions §2): only with ENABLE_TEST_CLOCK=1 here and
 * while the running processes (shared/processRegistry.ts) all report it, and at least one runs: a
 * production deployment, whose processes run without it, refuses the command.
 */
export async function clockCommand(
  deps: Deps,
  input: { action: 'advance'; ms: number } | { action: 'reset' },
): Promise<{ offsetMs: number }> {
  if (!deps.config.enableTestClock) {
    throw new CommandError('test_clock_disabled', 'the test clock needs ENABLE_TEST_CLOCK=1 here and in every process');
  }
  const processes = await runningProcesses(deps.redis);
  if (processes.length === 0) {
    throw new CommandError(
      'test_clock_disabled',
      'no running process reports the test clock: start ingest, analyzer and management with ENABLE_TEST_CLOCK=1 first',
    );
  }
  const without = processes.filter((running) => !running.testClock);
  if (without.length > 0) {
    const names = without.map((running) => `${running.kind} (pid ${running.pid} on ${running.host})`).join(', ');
    throw new CommandError(
      'test_clock_disabled',
      `running without ENABLE_TEST_CLOCK=1: ${names}; the test clock is refused while any process runs without it`,
    );
  }
  const offsetMs = input.action === 'advance' ? await advanceTestClock(deps.redis, input.ms) : await resetTestClock(deps.redis);
  return { offsetMs };
}

/**
 * `set-allowance --account ID --mode sandbox --limit N`: the account's Sandbox monthly allowance,
 * in PostgreSQL (read by the console usage route) and mirrored to Redis for the ingest edge.
 */
export async function setAllowanceCommand(deps: Deps, input: { account: string; mode: string; limit: number }): Promise<{ limit: number }> {
  if (input.mode !== 'sandbox')
    throw new CommandError('invalid_arguments', 'only --mode sandbox has a monthly allowance (Live is metered without a quota)');
  if (!hasIdForm(input.account, 'acct_')) throw new AppError('invalid_billing_account_id');
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    const { rowCount } = await db.query('UPDATE accounts SET sandbox_monthly_allowance = $2 WHERE id = $1', [input.account, input.limit]);
    if (!rowCount) throw new AppError('account_not_found');
    await recordAudit(db, {
      workspaceId: null,
      actorType: 'operator',
      actorId: null,
      action: 'account.set_allowance',
      targetId: input.account,
      metadata: { mode: 'sandbox', limit: input.limit },
      at: now,
    });
    // Before COMMIT: a Redis failure rolls the change back instead of leaving the edge behind.
    await deps.redis.set(RedisKeys.sandboxAllowanceLimit(input.account), String(input.limit));
    return { limit: input.limit };
  });
}

export interface MailItem {
  id: string;
  to: string;
  kind: string;
  body: Record<string, unknown>;
  createdAt: string;
  sentAt: string | null;
}

const MAIL_BATCH = 100;

/**
 * `mail [--email E] [--all]`: prints waiting mail (verification links) and marks it delivered,
 * since printing it to the operator is its delivery. `--all` reprints the latest mail, delivered or not.
 */
export async function mailCommand(deps: Deps, input: { email?: string; all?: boolean } = {}): Promise<{ mail: MailItem[] }> {
  const email = input.email ?? null;
  type Row = { id: string; to_email: string; kind: string; body: Record<string, unknown>; created_at: Date; sent_at: Date | null };
  const { rows } = input.all
    ? await deps.pool.query<Row>(
        `SELECT id::text, to_email, kind, body, created_at, sent_at FROM email_outbox
        WHERE ($1::text IS NULL OR lower(to_email) = lower($1)) ORDER BY id DESC LIMIT $2`,
        [email, MAIL_BATCH],
      )
    : await deps.pool.query<Row>(
        `UPDATE email_outbox SET sent_at = $3
        WHERE id IN (SELECT id FROM email_outbox
                      WHERE sent_at IS NULL AND ($1::text IS NULL OR lower(to_email) = lower($1))
                      ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
        RETURNING id::text, to_email, kind, body, created_at, NULL::timestamptz AS sent_at`,
        [email, MAIL_BATCH, deps.clock.now()],
      );
  const mail = rows
    .map((row) => ({
      id: row.id,
      to: row.to_email,
      kind: row.kind,
      body: row.body,
      createdAt: row.created_at.toISOString(),
      sentAt: row.sent_at?.toISOString() ?? null,
    }))
    .sort((a, b) => Number(a.id) - Number(b.id));
  return { mail };
}

export type ParsedCommand =
  | { command: 'bootstrap'; input: BootstrapInput }
  | { command: 'create-api-key'; input: { workspace: string; scopes: string[] | 'all'; expiresInSeconds?: number } }
  | { command: 'revoke-api-key'; input: { id: string } }
  | { command: 'maintenance'; action: 'pause' | 'resume' }
  | { command: 'clock'; input: { action: 'advance'; ms: number } | { action: 'reset' } }
  | { command: 'set-allowance'; input: { account: string; mode: string; limit: number } }
  | { command: 'mail'; input: { email?: string; all?: boolean } };

/** Runs one parsed command; the result is the one JSON object the CLI prints. */
export async function runCommand(deps: Deps, parsed: ParsedCommand): Promise<object> {
  switch (parsed.command) {
    case 'bootstrap':
      return bootstrap(deps, parsed.input) as Promise<BootstrapResult>;
    case 'create-api-key':
      return createApiKeyCommand(deps, parsed.input);
    case 'revoke-api-key':
      return revokeApiKeyCommand(deps, parsed.input);
    case 'maintenance':
      return maintenanceCommand(deps, parsed.action);
    case 'clock':
      return clockCommand(deps, parsed.input);
    case 'set-allowance':
      return setAllowanceCommand(deps, parsed.input);
    case 'mail':
      return mailCommand(deps, parsed.input);
  }
}
