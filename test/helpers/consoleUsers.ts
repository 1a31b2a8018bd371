import { hashPassword } from '../../management/accounts/passwords.js';
import { createSession, insertUser } from '../../management/accounts/users.js';
import { insertAccount } from '../../management/workspaces/workspaceStore.js';
import { uniqueEmail, type TestContext } from './context.js';

export interface ConsoleUser {
  userId: string;
  email: string;
  sessionToken: string;
}

/** A fresh user with a console session and no account or workspace (the hash is not a real password). */
export async function createConsoleUser(ctx: TestContext, options: { verified?: boolean; name?: string } = {}): Promise<ConsoleUser> {
  const now = ctx.deps.clock.now();
  const email = uniqueEmail('console');
  const user = await insertUser(ctx.deps.pool, {
    email,
    name: options.name ?? 'Console User',
    passwordHash: 'scrypt$unusable',
    verified: options.verified ?? true,
    now,
  });
  const session = await createSession(ctx.deps.pool, user.id, now, ctx.deps.config.sessionTtlSeconds);
  return { userId: user.id, email, sessionToken: session.token };
}

export async function addWorkspaceMember(
  ctx: TestContext,
  workspaceId: string,
  userId: string,
  role: 'owner' | 'admin' | 'viewer',
): Promise<void> {
  await ctx.deps.pool.query('INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)', [workspaceId, userId, role]);
}

/**
 * 02 Authentication 4: the callers a browser-session adapter refuses, with their answers: a viewer
 * of the workspace, a signed-in non-member and no session. Each makes its session token (null:
 * none) for the workspace.
 */
export const REFUSED_CONSOLE_CALLERS: [string, (ctx: TestContext, workspaceId: string) => Promise<string | null>, number, string][] = [
  [
    'a viewer',
    async (ctx, workspaceId) => {
      const viewer = await createConsoleUser(ctx);
      await addWorkspaceMember(ctx, workspaceId, viewer.userId, 'viewer');
      return viewer.sessionToken;
    },
    403,
    'forbidden',
  ],
  ['a signed-in non-member', async (ctx) => (await createConsoleUser(ctx)).sessionToken, 404, 'workspace_not_found'],
  ['no session', async () => null, 401, 'unauthenticated'],
];

export async function addAccountMember(ctx: TestContext, accountId: string, userId: string, role: 'owner' | 'admin'): Promise<void> {
  await ctx.deps.pool.query('INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3)', [accountId, userId, role]);
}

/** A further account owned by the user. */
export async function createAccountFor(ctx: TestContext, userId: string, name = 'Second account'): Promise<string> {
  return (await insertAccount(ctx.deps.pool, { name, ownerUserId: userId, now: ctx.deps.clock.now() })).id;
}

/** Last audit actions recorded for a workspace (newest first). */
export async function auditActions(ctx: TestContext, workspaceId: string): Promise<string[]> {
  const { rows } = await ctx.deps.pool.query<{ action: string }>(
    'SELECT action FROM audit_events WHERE workspace_id = $1 ORDER BY id DESC',
    [workspaceId],
  );
  return rows.map((row) => row.action);
}

/**
 * A fresh user who signs in with `password` (through `POST /auth/login`, as a person would), with
 * no session yet and no account or workspace; verified unless told otherwise.
 */
export async function createUserWithPassword(
  ctx: TestContext,
  password: string,
  options: { verified?: boolean } = {},
): Promise<{ userId: string; email: string }> {
  const email = uniqueEmail('signin');
  const user = await insertUser(ctx.deps.pool, {
    email,
    name: 'Signing In',
    passwordHash: await hashPassword(password),
    verified: options.verified ?? true,
    now: ctx.deps.clock.now(),
  });
  return { userId: user.id, email };
}
