import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../shared/db/pool.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hashPassword } from '../accounts/passwords.js';
import { createSession, findUserByEmail, insertUser, type UserRecord } from '../accounts/users.js';
import { insertApiKey } from '../apiKeys/apiKeyStore.js';
import { WORKSPACE_SCOPES, isWorkspaceScope, type WorkspaceScope } from '../auth/scopes.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { slugFromName, validWorkspaceName } from '../workspaces/rules.js';
import { insertAccount, insertWorkspace } from '../workspaces/workspaceStore.js';

export interface BootstrapInput {
  email: string;
  workspace?: string;
  scopes?: string[] | 'all';
  legacy?: boolean;
}

export interface BootstrapResult {
  user: { id: string; email: string };
  account: { id: string };
  workspace: { id: string; slug: string; tenantId: string };
  sessionToken: string;
  apiKey: { id: string; key: string; scopes: WorkspaceScope[] };
}

export function parseScopes(scopes: string[] | 'all' | undefined): WorkspaceScope[] {
  if (scopes === undefined || scopes === 'all') return [...WORKSPACE_SCOPES];
  const unknown = scopes.filter((scope) => !isWorkspaceScope(scope));
  if (unknown.length > 0 || scopes.length === 0) throw new AppError('invalid_api_key_request');
  return [...new Set(scopes)] as WorkspaceScope[];
}

/**
 * An unverified user was made by whoever signed up first with the address, not necessarily its
 * owner: bootstrap keeps the user (00-decisions §2 "creates (or reuses)") but none of what the
 * sign-up chose. The password becomes an unknown random one (as for a user bootstrap creates),
 * the name the address's local part, and the user's sessions and verification links end, so only
 * the session and API key that bootstrap prints open the workspace (docs/decisions/accounts-and-workspaces.md).
 */
async function takeOverUnverifiedUser(
  db: Queryable,
  user: UserRecord,
  passwordHash: string,
  now: Date,
): Promise<UserRecord & { passwordHash: string }> {
  const name = user.email.split('@')[0];
  await db.query('UPDATE users SET email_verified_at = $2, password_hash = $3, name = $4 WHERE id = $1', [
    user.id,
    now,
    passwordHash,
    name,
  ]);
  await db.query('UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL', [user.id, now]);
  await db.query('UPDATE email_verifications SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [user.id, now]);
  await recordAudit(db, {
    workspaceId: null,
    actorType: 'operator',
    actorId: null,
    action: 'user.credentials_reset',
    targetId: user.id,
    at: now,
  });
  return { ...user, name, emailVerified: true, passwordHash };
}

/**
 * Operator `bootstrap` (00-decisions §2): creates or reuses a verified user, their Developer
 * account and an active workspace named by `workspace`, then a console session and an API key.
 * The same domain code as the console routes does the writes.
 */
export async function bootstrap(deps: Deps, input: BootstrapInput): Promise<BootstrapResult> {
  const scopes = parseScopes(input.scopes);
  const now = deps.clock.now();
  const passwordHash = await hashPassword(randomBytes(24).toString('base64url'));
  return withTransaction(deps.pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`bootstrap:${input.email.toLowerCase()}`]);
    let user = await findUserByEmail(db, input.email);
    if (!user) {
      const created = await insertUser(db, { email: input.email, name: input.email.split('@')[0], passwordHash, verified: true, now });
      user = { ...created, passwordHash };
    } else if (!user.emailVerified) {
      user = await takeOverUnverifiedUser(db, user, passwordHash, now);
    }
    const owned = await db.query<{ account_id: string }>(
      "SELECT account_id FROM account_members WHERE user_id = $1 AND role = 'owner' ORDER BY account_id LIMIT 1",
      [user.id],
    );
    const accountId =
      owned.rows[0]?.account_id ?? (await insertAccount(db, { name: `${user.name}'s account`, ownerUserId: user.id, now })).id;

    const name = validWorkspaceName(input.workspace ?? 'Default workspace');
    const model = input.legacy ? 'legacy' : 'canonical';
    const existing = await db.query<{ id: string; slug: string; tenant_id: string }>(
      `SELECT w.id, w.slug, w.tenant_id FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
        WHERE w.account_id = $1 AND m.user_id = $2 AND w.name = $3 AND w.model = $4 AND w.status = 'active'
        ORDER BY w.created_at LIMIT 1`,
      [accountId, user.id, name, model],
    );
    let workspace = existing.rows[0]
      ? { id: existing.rows[0].id, slug: existing.rows[0].slug, tenantId: existing.rows[0].tenant_id }
      : null;
    if (!workspace) {
      const base = slugFromName(name);
      // Concurrent bootstraps of one name take turns (held until commit), so the second sees the
      // first one's slug as taken instead of failing on the unique index.
      await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`workspace-slug ${base}`]);
      let slug = base;
      while ((await db.query('SELECT 1 FROM workspaces WHERE slug = $1', [slug])).rowCount)
        slug = `${base.slice(0, 40)}-${randomBytes(3).toString('hex')}`;
      const created = await insertWorkspace(db, { accountId, ownerUserId: user.id, name, slug, model, active: true, now });
      workspace = { id: created.id, slug: created.slug, tenantId: created.tenantId };
      await recordAudit(db, {
        workspaceId: created.id,
        actorType: 'operator',
        actorId: null,
        action: 'workspace.create',
        targetId: created.id,
        at: now,
      });
    }
    const session = await createSession(db, user.id, now, deps.config.sessionTtlSeconds);
    const apiKey = await insertApiKey(db, { workspaceId: workspace.id, scopes, expiresAt: null, createdBy: 'operator', now });
    await recordAudit(db, {
      workspaceId: workspace.id,
      actorType: 'operator',
      actorId: null,
      action: 'api_key.create',
      targetId: apiKey.id,
      metadata: { scopes },
      at: now,
    });
    return {
      user: { id: user.id, email: user.email },
      account: { id: accountId },
      workspace,
      sessionToken: session.token,
      apiKey: { id: apiKey.id, key: apiKey.key, scopes: apiKey.scopes },
    };
  });
}
