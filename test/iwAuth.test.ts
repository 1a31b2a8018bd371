import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_SCOPE_SUFFIXES } from '../management/auth/scopes.js';
import { sha256Hex } from '../shared/secrets.js';
import { callCli, serveOnLoopback } from './helpers/cli.js';
import { cliLogin } from './helpers/cliLogin.js';
import { type ConsoleUser, createConsoleUser } from './helpers/consoleUsers.js';
import { advanceClock, createTestContext, resetClockAndHooks, type TestContext } from './helpers/context.js';
import { freshIwEnv, type IwEnv, loginIw, removeIwEnvs, runIw } from './helpers/iw.js';

// Issue 30 items 1 and 4: the built `iw` (a subprocess, file token storage, a config directory of
// each test's own) against the management plane served on loopback. Logins run the real device
// grant: `iw login` polls with the server's interval (5 s) on the real clock, so each takes ~5 s.

let ctx: TestContext;
let base: string;
let user: ConsoleUser;

beforeAll(async () => {
  ctx = await createTestContext();
  base = await serveOnLoopback(ctx);
  user = await createConsoleUser(ctx, { name: 'Ada Lovelace' });
});
afterAll(async () => {
  await ctx.close();
  await removeIwEnvs();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
});

interface StoredLogin {
  baseUrl: string;
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
  scope: string;
}

const tokenFile = (iw: IwEnv, profile = 'default') => join(iw.configDir, 'tokens', `${profile}.json`);
const storedLogin = async (iw: IwEnv, profile = 'default') => JSON.parse(await readFile(tokenFile(iw, profile), 'utf8')) as StoredLogin;
const meStatus = async (accessToken: string) => (await callCli(ctx, accessToken, 'GET', '/v1/cli/me')).statusCode;
const clientRevoked = async (accessToken: string) => {
  const { rows } = await ctx.deps.pool.query<{ revoked_at: Date | null }>(
    'SELECT c.revoked_at FROM cli_clients c JOIN cli_tokens t ON t.client_id = c.id WHERE t.token_hash = $1',
    [sha256Hex(accessToken)],
  );
  return rows[0].revoked_at !== null;
};
const ALL_SCOPES = [...CLI_SCOPE_SUFFIXES.map((suffix) => `service:cli:${suffix}`), 'offline_access'];

describe('iw login', () => {
  it('logs in through the device grant approved in the console, keeping the tokens in a 0600 file', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const login = await storedLogin(iw);
    expect(login).toMatchObject({ baseUrl: base, scope: ALL_SCOPES.join(' ') });
    expect(login.accessToken).toMatch(/^svc_cli_at_/);
    expect(login.refreshToken).toMatch(/^svc_cli_rt_/);
    expect((await stat(tokenFile(iw))).mode & 0o777).toBe(0o600);
    const config = JSON.parse(await readFile(join(iw.configDir, 'config.json'), 'utf8'));
    expect(config.profiles.default).toEqual({ baseUrl: base, storage: 'file' });
    expect(await meStatus(login.accessToken)).toBe(200);

    const whoami = await runIw(['whoami', '--json'], iw);
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout)).toEqual({ schemaVersion: 1, user: { id: user.userId, name: 'Ada Lovelace' }, scopes: ALL_SCOPES });
    const human = await runIw(['whoami'], iw);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Logged in to ${base} as Ada Lovelace (${user.userId})`);
    expect(human.stderr).toBe('');
  });

  it('asks only for the scopes of --scopes (and offline_access), under the profile of --profile', async () => {
    const iw = await loginIw(base, user.sessionToken, { scopes: ['incidents:read', 'service:cli:repairs:read'], profile: 'staging' });
    const whoami = await runIw(['whoami', '--json'], iw);
    expect(whoami.code).toBe(0);
    expect(JSON.parse(whoami.stdout).scopes).toEqual(['service:cli:incidents:read', 'service:cli:repairs:read', 'offline_access']);
    expect((await storedLogin(iw, 'staging')).baseUrl).toBe(base);
    // The default profile of the same directory has no login.
    const other = await runIw(['whoami', '--profile', 'default'], iw);
    expect(other.code).toBe(4);
    expect(other.stderr).toContain('run `iw login`');
    // The tokens go only to the base URL they were issued by, and never over plain http off this machine.
    const elsewhere = await runIw(['whoami'], { ...iw, env: { ...iw.env, IW_BASE_URL: 'http://127.0.0.1:9/' } });
    expect(elsewhere.code).toBe(4);
    expect(elsewhere.stderr).toContain(`is for ${base}, not http://127.0.0.1:9`);
    const plain = await runIw(['whoami'], { ...iw, env: { ...iw.env, IW_BASE_URL: 'http://watch.example.com' } });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('refusing to send credentials over plain http');
  });

  it('refuses an unknown scope before asking the service for a code', async () => {
    const result = await runIw(
      ['login', '--insecure-storage', '--no-browser', '--base-url', base, '--scopes', 'incidents:read,secrets:steal'],
      await freshIwEnv(),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unknown scope "secrets:steal"');
    expect(result.stderr).not.toContain('one-time code');
  });

  it('without a keychain and without --insecure-storage, fails naming the flag before any code is shown', async () => {
    const iw = await freshIwEnv();
    // No Secret Service can be reached at this bus address, whatever the machine has.
    iw.env.DBUS_SESSION_BUS_ADDRESS = `unix:path=${join(iw.configDir, 'no-bus')}`;
    const result = await runIw(['login', '--no-browser', '--base-url', base], iw);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('iw login --insecure-storage');
    expect(result.stderr).not.toContain('one-time code');
    await expect(stat(join(iw.configDir, 'tokens', 'default.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a second login of the same profile revokes the grant of the login it replaces', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const first = await storedLogin(iw);
    await loginIw(base, user.sessionToken, { env: iw });
    const second = await storedLogin(iw);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(await clientRevoked(first.accessToken)).toBe(true);
    expect(await meStatus(second.accessToken)).toBe(200);
  });
});

describe('iw sessions', () => {
  it('lists every session over all pages with --json, the current one marked, and revokes one', async () => {
    const sessionUser = await createConsoleUser(ctx);
    const iw = await loginIw(base, sessionUser.sessionToken);
    // 100 more logins of the same user through the device grant over HTTP: the list has two pages.
    const others = [];
    for (let i = 0; i < 100; i++)
      others.push(await cliLogin(base, sessionUser.sessionToken, ['service:cli:incidents:read'], { db: ctx.deps.pool }));

    const listed = await runIw(['sessions', 'list', '--json'], iw);
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout) as { schemaVersion: number; items: { id: string; current: boolean }[]; nextCursor: null };
    expect(page.schemaVersion).toBe(1);
    expect(page.nextCursor).toBeNull();
    expect(page.items).toHaveLength(101);
    expect(new Set(page.items.map((item) => item.id))).toEqual(
      new Set([...others.map((other) => other.clientId), page.items.find((item) => item.current)?.id]),
    );
    expect(page.items.filter((item) => item.current)).toHaveLength(1);

    const table = await runIw(['sessions', 'list'], iw);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+CURRENT\s+CREATED \(UTC\)\s+LAST USED\s+SCOPES$/);
    expect(table.stdout).toContain(others[0].clientId);

    const revoked = await runIw(['sessions', 'revoke', others[0].clientId, '--json'], iw);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ schemaVersion: 1, revoked: true });
    expect(await meStatus(others[0].accessToken)).toBe(401);
    expect(await meStatus(others[1].accessToken)).toBe(200);

    const foreign = await runIw(['sessions', 'revoke', 'clic_doesnotexist', '--json'], iw);
    expect(foreign.code).toBe(1);
    expect(JSON.parse(foreign.stdout)).toEqual({ error: 'cli_session_not_found' });
    expect(foreign.stderr).toContain('cli_session_not_found');
  });
});

describe('refresh', () => {
  it('refreshes mid-command when the service refuses the expired access token, rotating the stored refresh token', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const before = await storedLogin(iw);
    // The service's clock passes the access token's 15 minutes; the CLI's own clock does not know.
    await advanceClock(ctx, 16 * 60_000);
    expect(await meStatus(before.accessToken)).toBe(401);

    const whoami = await runIw(['whoami', '--json'], iw);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout).user.id).toBe(user.userId);
    const after = await storedLogin(iw);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(await meStatus(after.accessToken)).toBe(200);
  });

  it('refreshes before sending when the stored access token expires within a minute', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const before = await storedLogin(iw);
    await writeFile(tokenFile(iw), JSON.stringify({ ...before, expiresAt: Date.now() + 30_000 }));
    const whoami = await runIw(['whoami', '--json'], iw);
    expect(whoami.code, whoami.stderr).toBe(0);
    const after = await storedLogin(iw);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 14 * 60_000);
  });

  it('three commands refreshing at once spend the refresh token once: all succeed and the grant stays valid', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const before = await storedLogin(iw);
    await advanceClock(ctx, 16 * 60_000);
    const results = await Promise.all([
      runIw(['whoami', '--json'], iw),
      runIw(['sessions', 'list', '--json'], iw),
      runIw(['whoami', '--json'], iw),
    ]);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const after = await storedLogin(iw);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    // A second spend of the same refresh token would have revoked the whole grant.
    expect(await clientRevoked(after.accessToken)).toBe(false);
    expect(await meStatus(after.accessToken)).toBe(200);
    const again = await runIw(['whoami'], iw);
    expect(again.code).toBe(0);
  });
});

describe('iw logout and expired logins', () => {
  it('logout revokes the login on the service and forgets it here', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const login = await storedLogin(iw);
    const logout = await runIw(['logout', '--json'], iw);
    expect(logout.code, logout.stderr).toBe(0);
    expect(JSON.parse(logout.stdout)).toEqual({ schemaVersion: 1, revoked: true });
    expect(await meStatus(login.accessToken)).toBe(401);
    expect(await clientRevoked(login.accessToken)).toBe(true);
    await expect(stat(tokenFile(iw))).rejects.toMatchObject({ code: 'ENOENT' });

    const whoami = await runIw(['whoami'], iw);
    expect(whoami.code).toBe(4);
    expect(whoami.stderr).toContain('not logged in');
    expect(whoami.stderr).toContain('run `iw login`');
  });

  it('logout with the service unreachable still forgets the login, and says it could not revoke it', async () => {
    const other = await createTestContext();
    const otherBase = await serveOnLoopback(other);
    const iw = await loginIw(otherBase, user.sessionToken);
    const login = await storedLogin(iw);
    await other.close();
    const logout = await runIw(['logout'], iw);
    expect(logout.code).toBe(1);
    expect(logout.stderr).toContain('could not revoke it on the service');
    await expect(stat(tokenFile(iw))).rejects.toMatchObject({ code: 'ENOENT' });
    // It is still valid remotely, as the message says.
    expect(await meStatus(login.accessToken)).toBe(200);
  });

  it('a revoked grant gives exit code 4 and says to log in', async () => {
    const iw = await loginIw(base, user.sessionToken);
    const login = await storedLogin(iw);
    // Revoked elsewhere (the console, or another login's `iw sessions revoke`).
    expect((await callCli(ctx, login.accessToken, 'DELETE', '/v1/cli/session')).statusCode).toBe(200);
    for (const args of [['whoami'], ['sessions', 'list', '--json']]) {
      const result = await runIw(args, iw);
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('expired or was revoked: run `iw login`');
    }
  });

  it('a refresh token past its 30 days gives exit code 4 and says to log in', async () => {
    const iw = await loginIw(base, user.sessionToken);
    await advanceClock(ctx, 31 * 24 * 3600_000);
    const result = await runIw(['whoami', '--json'], iw);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('run `iw login`');
  });

  it('without any login, every API command exits 4 saying to log in', async () => {
    const iw = await freshIwEnv();
    for (const args of [['whoami'], ['sessions', 'list'], ['sessions', 'revoke', 'clic_x']]) {
      const result = await runIw(args, iw);
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('not logged in');
    }
    const logout = await runIw(['logout'], iw);
    expect(logout.code).toBe(0);
    expect(logout.stderr).toContain('Not logged in');
  });
});
