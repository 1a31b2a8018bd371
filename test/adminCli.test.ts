import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { helpRequest, parseCommand } from '../management/admin/args.js';
import { COMMANDS, OPTIONS } from '../management/admin/commandTable.js';
import { commandErrorBody } from '../management/admin/commandError.js';
import { runCommand } from '../management/admin/commands.js';
import { authenticateApiKey } from '../management/auth/apiKeyAuth.js';
import { WORKSPACE_SCOPES } from '../management/auth/scopes.js';
import { isWritePaused, setWritePause } from '../management/maintenance.js';
import { resetTestClock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { RedisKeys } from '../shared/redis.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { spawnProcess } from './helpers/processes.js';
import { bootstrapWorkspace, callWithSession, createTestContext, freshClientIp, uniqueEmail, type TestContext } from './helpers/context.js';

const exec = promisify(execFile);
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

/** Runs a command line in-process, as the CLI would, returning its one JSON object. */
async function run(argv: string[]): Promise<Record<string, unknown>> {
  try {
    return (await runCommand(ctx.deps, parseCommand(argv))) as Record<string, unknown>;
  } catch (error) {
    return commandErrorBody(error);
  }
}

const authenticate = (key: string) => authenticateApiKey(ctx.deps.pool, `Bearer ${key}`, ctx.deps.clock.nowMs());

describe('argument parsing', () => {
  it('parses every command', () => {
    expect(
      parseCommand([
        'bootstrap',
        '--email',
        'a@b.test',
        '--workspace',
        'Main',
        '--scopes',
        'integrations:read,contracts:read',
        '--legacy',
        '--json',
      ]),
    ).toEqual({
      command: 'bootstrap',
      input: { email: 'a@b.test', workspace: 'Main', scopes: ['integrations:read', 'contracts:read'], legacy: true },
    });
    expect(parseCommand(['create-api-key', '--workspace', 'main', '--scopes', 'all', '--expires-in', '600'])).toEqual({
      command: 'create-api-key',
      input: { workspace: 'main', scopes: 'all', expiresInSeconds: 600 },
    });
    expect(parseCommand(['revoke-api-key', '--id', 'key_x'])).toEqual({ command: 'revoke-api-key', input: { id: 'key_x' } });
    expect(parseCommand(['maintenance', 'pause', '--json'])).toEqual({ command: 'maintenance', action: 'pause' });
    expect(parseCommand(['clock', 'advance', '--ms', '1500'])).toEqual({ command: 'clock', input: { action: 'advance', ms: 1500 } });
    expect(parseCommand(['clock', 'reset'])).toEqual({ command: 'clock', input: { action: 'reset' } });
    expect(parseCommand(['set-allowance', '--account', 'acct_x', '--mode', 'sandbox', '--limit', '5'])).toEqual({
      command: 'set-allowance',
      input: { account: 'acct_x', mode: 'sandbox', limit: 5 },
    });
    expect(parseCommand(['mail', '--all'])).toEqual({ command: 'mail', input: { all: true } });
  });

  const invalid: string[][] = [
    [],
    ['nope'],
    ['bootstrap'],
    ['bootstrap', '--email', 'not an email'],
    ['bootstrap', '--email', 'a@b.test', '--id', 'x'],
    ['bootstrap', '--email', 'a@b.test', '--unknown'],
    ['create-api-key', '--workspace', 'main'],
    ['create-api-key', '--workspace', 'main', '--scopes', 'all', '--expires-in', 'soon'],
    ['revoke-api-key'],
    ['maintenance'],
    ['maintenance', 'stop'],
    ['maintenance', 'pause', 'now'],
    ['clock', 'advance'],
    ['clock', 'advance', '--ms', '-5'],
    ['clock', 'rewind'],
    ['set-allowance', '--account', 'acct_x', '--mode', 'sandbox', '--limit', '1.5'],
    ['set-allowance', '--account', 'acct_x', '--mode', 'sandbox', '--limit', '99999999999'],
  ];
  for (const argv of invalid) {
    it(`refuses "${argv.join(' ')}" with invalid_arguments`, async () => {
      const out = await run(argv);
      expect(out).toEqual({ error: 'invalid_arguments', message: expect.stringContaining('usage:') });
    });
  }
});

describe('help', () => {
  it('recognises --help, -h and help, with the command they name', () => {
    expect(helpRequest(['--help'])).toBe('');
    expect(helpRequest(['-h'])).toBe('');
    expect(helpRequest(['help'])).toBe('');
    expect(helpRequest(['help', 'clock'])).toBe('clock');
    expect(helpRequest(['bootstrap', '--help'])).toBe('bootstrap');
    expect(helpRequest(['clock', 'advance', '-h'])).toBe('clock');
    expect(helpRequest(['--json', '--help'])).toBe('');
    expect(helpRequest(['bootstrap', '--email', 'a@b.test'])).toBeNull();
    expect(helpRequest([])).toBeNull();
  });

  it('documents exactly the commands and options the parser takes', () => {
    // Every option of the parser is documented under some command, and every command of the table parses.
    const documented = new Set(COMMANDS.flatMap((command) => Object.keys(command.options)));
    expect(Object.keys(OPTIONS).filter((name) => name !== 'json' && !documented.has(name))).toEqual([]);
    for (const command of COMMANDS) {
      const refusal = (argv: string[]) => {
        try {
          parseCommand(argv);
          return '';
        } catch (error) {
          return (error as Error).message;
        }
      };
      expect(refusal([command.name])).not.toMatch(/unknown command/);
      // Each documented option is one the parser lets this command take.
      for (const option of Object.keys(command.options))
        expect(
          refusal([command.name, `--${option}`, ...(OPTIONS[option as keyof typeof OPTIONS].type === 'string' ? ['1'] : [])]),
        ).not.toMatch(/takes no/);
    }
  });
});

describe('bootstrap', () => {
  it('creates a verified user, account, active workspace, session and key; reuses them on a rerun', async () => {
    const email = uniqueEmail('cli');
    const out = await run(['bootstrap', '--email', email, '--workspace', 'Ops', '--scopes', 'integrations:read']);
    expect(out).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email },
      account: { id: expect.stringMatching(/^acct_/) },
      workspace: { id: expect.stringMatching(/^ws_/), slug: expect.any(String), tenantId: expect.stringMatching(/^ten_/) },
      sessionToken: expect.stringMatching(/^svc_sess_/),
      apiKey: { id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^svc_api_/), scopes: ['integrations:read'] },
    });
    const again = await run(['bootstrap', '--email', email, '--workspace', 'Ops']);
    expect(again).toMatchObject({ user: out.user, account: out.account, workspace: out.workspace });
    expect((again.apiKey as { scopes: string[] }).scopes).toEqual([...WORKSPACE_SCOPES]);
  });

  it("takes over an unverified self-signup: the squatter's password, name, sessions and mail no longer count", async () => {
    const email = uniqueEmail('squatted');
    const squatterPassword = 'the squatter chose this';
    const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
      ctx.app.inject({ method: 'POST', url, payload, headers, remoteAddress: freshClientIp() });
    const signup = await post('/auth/signup', { email, password: squatterPassword, name: 'Squatter' });
    expect(signup.statusCode).toBe(201);
    const squatter = await post('/auth/login', { email, password: squatterPassword });
    expect(squatter.statusCode).toBe(200);
    const squatterCookie = `session=${squatter.cookies.find((c) => c.name === 'session')!.value}`;
    const { rows: mail } = await ctx.deps.pool.query(
      "SELECT body FROM email_outbox WHERE lower(to_email) = lower($1) AND kind = 'email_verification'",
      [email],
    );

    const out = (await run(['bootstrap', '--email', email, '--workspace', 'Squatted'])) as unknown as BootstrapResult;
    expect(out.user).toEqual({ id: signup.json().user.id, email });

    // The sign-up's password and session open nothing, and its verification link is spent.
    const login = await post('/auth/login', { email, password: squatterPassword });
    expect(login.statusCode).toBe(401);
    expect(login.json()).toEqual({ error: 'unauthenticated' });
    const oldSession = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { cookie: squatterCookie } });
    expect(oldSession.statusCode).toBe(401);
    expect((await post('/auth/verify-email', { token: mail[0].body.token })).statusCode).toBe(400);

    // What bootstrap printed does open the workspace, and the user is verified under the address's name.
    const list = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { cookie: `session=${out.sessionToken}` } });
    expect(list.statusCode).toBe(200);
    expect(JSON.stringify(list.json())).toContain(out.workspace.slug);
    expect((await authenticate(out.apiKey.key)).workspaceId).toBe(out.workspace.id);
    const stored = await ctx.deps.pool.query('SELECT name, email_verified_at FROM users WHERE id = $1', [out.user.id]);
    expect(stored.rows[0]).toEqual({ name: email.split('@')[0], email_verified_at: expect.any(Date) });
    const audit = await ctx.deps.pool.query(
      "SELECT actor_type FROM audit_events WHERE target_id = $1 AND action = 'user.credentials_reset'",
      [out.user.id],
    );
    expect(audit.rows).toEqual([{ actor_type: 'operator' }]);

    // A rerun reuses the now verified user as before and resets nothing more.
    const again = (await run(['bootstrap', '--email', email, '--workspace', 'Squatted'])) as unknown as BootstrapResult;
    expect(again.workspace).toEqual(out.workspace);
    const stillOpen = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { cookie: `session=${out.sessionToken}` } });
    expect(stillOpen.statusCode).toBe(200);
  });

  it('refuses unknown scopes', async () => {
    expect(await run(['bootstrap', '--email', uniqueEmail(), '--scopes', 'root'])).toMatchObject({ error: 'invalid_api_key_request' });
  });
});

describe('create-api-key and revoke-api-key', () => {
  it('creates a usable key with an expiry, then revokes it (idempotently)', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const out = await run([
      'create-api-key',
      '--workspace',
      boot.workspace.slug,
      '--scopes',
      'contracts:read,contracts:write',
      '--expires-in',
      '3600',
      '--json',
    ]);
    expect(out).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^svc_api_/),
      scopes: ['contracts:read', 'contracts:write'],
      expiresAt: expect.any(String),
    });
    expect(Date.parse(out.expiresAt as string) - ctx.deps.clock.nowMs()).toBeGreaterThan(3590 * 1000);
    expect((await authenticate(out.key as string)).workspaceId).toBe(boot.workspace.id);

    expect(await run(['revoke-api-key', '--id', out.id as string])).toEqual({ revoked: true });
    await expect(authenticate(out.key as string)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(await run(['revoke-api-key', '--id', out.id as string])).toEqual({ revoked: true });
    const audit = await ctx.deps.pool.query(
      "SELECT action FROM audit_events WHERE target_id = $1 AND actor_type = 'operator' ORDER BY id",
      [out.id],
    );
    expect(audit.rows.map((r) => r.action)).toEqual(['api_key.create', 'api_key.revoke']);
  });

  it('reports unknown and archived workspaces, bad scopes and lifetimes, unknown keys', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect(await run(['create-api-key', '--workspace', `missing-${newId('ws_').slice(-8)}`, '--scopes', 'all'])).toMatchObject({
      error: 'workspace_not_found',
      message: expect.any(String),
    });
    expect(await run(['create-api-key', '--workspace', boot.workspace.slug, '--scopes', 'integrations:read,nope'])).toMatchObject({
      error: 'invalid_api_key_request',
    });
    expect(await run(['create-api-key', '--workspace', boot.workspace.slug, '--scopes', 'all', '--expires-in', '10'])).toMatchObject({
      error: 'invalid_api_key_request',
    });
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`);
    expect(await run(['create-api-key', '--workspace', boot.workspace.slug, '--scopes', 'all'])).toMatchObject({
      error: 'workspace_unavailable',
    });
    const keys = await ctx.deps.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1', [boot.workspace.id]);
    expect(keys.rows[0].n).toBe(1);
    for (const id of [newId('key_'), 'key_bad'])
      expect(await run(['revoke-api-key', '--id', id])).toMatchObject({ error: 'api_key_not_found' });
  });
});

describe('maintenance', () => {
  it('pauses and resumes authenticated writes', async () => {
    try {
      expect(await run(['maintenance', 'pause', '--json'])).toEqual({ paused: true });
      expect(await isWritePaused(ctx.deps.redis)).toBe(true);
      const boot = await bootstrapWorkspace(ctx);
      const res = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`);
      expect(res.statusCode).toBe(503);
      expect(await run(['maintenance', 'resume'])).toEqual({ paused: false });
      expect(await isWritePaused(ctx.deps.redis)).toBe(false);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });
});

describe('clock', () => {
  // `admin clock` reads which processes run (shared/processRegistry.ts). Processes of other test
  // files that were killed with SIGKILL stay listed for up to 15 s: each test starts from none.
  beforeEach(async () => {
    await ctx.deps.redis.del(RedisKeys.runningProcesses);
  });
  afterEach(async () => {
    await resetTestClock(ctx.deps.redis);
    await ctx.deps.clock.sync();
  });

  it('advances and resets the shared test clock while the running processes honour it', async () => {
    const management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { ENABLE_TEST_CLOCK: '1' });
    try {
      expect(await run(['clock', 'advance', '--ms', '5000'])).toEqual({ offsetMs: 5000 });
      expect(await run(['clock', 'advance', '--ms', '1000'])).toEqual({ offsetMs: 6000 });
      await ctx.deps.clock.sync();
      expect(ctx.deps.clock.nowMs() - Date.now()).toBeGreaterThanOrEqual(5900);
      expect(await run(['clock', 'reset'])).toEqual({ offsetMs: 0 });
      expect(await ctx.deps.redis.get(RedisKeys.testClockOffset)).toBeNull();
    } finally {
      await management.stop();
    }
  });

  it('refuses without ENABLE_TEST_CLOCK=1 and changes nothing', async () => {
    const deps = { ...ctx.deps, config: { ...ctx.deps.config, enableTestClock: false } };
    await expect(runCommand(deps, parseCommand(['clock', 'advance', '--ms', '1000']))).rejects.toMatchObject({
      code: 'test_clock_disabled',
    });
    await expect(runCommand(deps, parseCommand(['clock', 'reset']))).rejects.toMatchObject({ code: 'test_clock_disabled' });
    expect(await ctx.deps.redis.get(RedisKeys.testClockOffset)).toBeNull();
  });

  it('refuses while no process reports running, and changes nothing', async () => {
    for (const argv of [
      ['clock', 'advance', '--ms', '1000'],
      ['clock', 'reset'],
    ]) {
      expect(await run(argv)).toEqual({ error: 'test_clock_disabled', message: expect.stringContaining('no running process') });
    }
    expect(await ctx.deps.redis.get(RedisKeys.testClockOffset)).toBeNull();
  });
});

describe('set-allowance', () => {
  it('sets the Sandbox allowance in PostgreSQL and Redis; the usage route reports it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect(await run(['set-allowance', '--account', boot.account.id, '--mode', 'sandbox', '--limit', '250'])).toEqual({ limit: 250 });
    const stored = await ctx.deps.pool.query('SELECT sandbox_monthly_allowance FROM accounts WHERE id = $1', [boot.account.id]);
    expect(stored.rows[0].sandbox_monthly_allowance).toBe(250);
    expect(await ctx.deps.redis.get(RedisKeys.sandboxAllowanceLimit(boot.account.id))).toBe('250');
    const usage = await callWithSession(ctx, boot.sessionToken, 'GET', `/billing-accounts/${boot.account.id}/usage`);
    expect(usage.json()).toMatchObject({ limit: 250, remaining: 250 });
    expect(await run(['set-allowance', '--account', boot.account.id, '--mode', 'sandbox', '--limit', '0'])).toEqual({ limit: 0 });
  });

  it('refuses another mode, malformed and unknown accounts, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect(await run(['set-allowance', '--account', boot.account.id, '--mode', 'live', '--limit', '5'])).toMatchObject({
      error: 'invalid_arguments',
    });
    expect(await run(['set-allowance', '--account', 'acct_bad', '--mode', 'sandbox', '--limit', '5'])).toMatchObject({
      error: 'invalid_billing_account_id',
    });
    const unknown = newId('acct_');
    expect(await run(['set-allowance', '--account', unknown, '--mode', 'sandbox', '--limit', '5'])).toMatchObject({
      error: 'account_not_found',
    });
    expect(await ctx.deps.redis.get(RedisKeys.sandboxAllowanceLimit(unknown))).toBeNull();
    const stored = await ctx.deps.pool.query('SELECT sandbox_monthly_allowance FROM accounts WHERE id = $1', [boot.account.id]);
    expect(stored.rows[0].sandbox_monthly_allowance).toBeNull();
  });
});

describe('mail', () => {
  it('prints waiting verification mail once; --all prints it again', async () => {
    const email = uniqueEmail('mail');
    const signup = await ctx.app.inject({
      method: 'POST',
      url: '/auth/signup',
      payload: { email, password: 'long enough password', name: 'Mail Reader' },
    });
    expect(signup.statusCode).toBe(201);
    const out = await run(['mail', '--email', email]);
    expect(out).toEqual({
      mail: [
        {
          id: expect.any(String),
          to: email,
          kind: 'email_verification',
          createdAt: expect.any(String),
          sentAt: null,
          body: {
            subject: expect.any(String),
            link: expect.stringContaining('/verify-email?token=svc_ver_'),
            token: expect.stringMatching(/^svc_ver_/),
          },
        },
      ],
    });
    const token = (out.mail as { body: { token: string } }[])[0].body.token;
    const verified = await ctx.app.inject({ method: 'POST', url: '/auth/verify-email', payload: { token } });
    expect(verified.statusCode).toBe(200);

    expect(await run(['mail', '--email', email])).toEqual({ mail: [] });
    const all = await run(['mail', '--email', email, '--all']);
    expect(all.mail as { sentAt: string | null }[]).toEqual([expect.objectContaining({ to: email, sentAt: expect.any(String) })]);
  });
});

describe('the compiled CLI', () => {
  const cli = 'dist/management/admin/cli.js';
  beforeAll(async () => {
    // Emits even when another module in the tree has a type error; the file must exist.
    await exec('npx', ['tsc', '-p', '.'], { cwd: process.cwd() }).catch(() => undefined);
    expect(existsSync(cli)).toBe(true);
  }, 120_000);

  it('runs bootstrap through npm and prints one JSON object', async () => {
    const email = uniqueEmail('spawned');
    const { stdout } = await exec('npm', ['run', '--silent', 'admin', '--', 'bootstrap', '--email', email, '--json'], { env: process.env });
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ user: { email }, apiKey: { key: expect.stringMatching(/^svc_api_/) } });
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect((await authenticate(out.apiKey.key)).workspaceId).toBe(out.workspace.id);
  });

  it('prints the usage of every command with its options for --help, -h and help, and exits 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const { stdout, stderr } = await exec('npm', ['run', '--silent', 'admin', '--', ...argv], { env: process.env });
      expect(stderr).toBe('');
      expect(stdout).toMatch(/^usage: npm run --silent admin -- <command>/);
      for (const command of COMMANDS) {
        for (const form of command.usage) expect(stdout).toContain(`\n  ${form}\n`);
        for (const option of Object.keys(command.options)) expect(stdout).toContain(`--${option}`);
      }
    }
  });

  it("prints one command's usage for `<command> --help` and `help <command>`, whatever else is on the line, without the stores", async () => {
    // An unreachable Redis and PostgreSQL: help does not need them.
    const env = { ...process.env, REDIS_URL: 'redis://127.0.0.1:1/1', DATABASE_URL: 'postgres://svc:svc@127.0.0.1:1/none' };
    for (const argv of [
      ['bootstrap', '--help'],
      ['help', 'bootstrap'],
      ['bootstrap', '--email', 'not an email', '-h'],
    ]) {
      const { stdout } = await exec('node', [cli, ...argv], { env });
      expect(stdout).toMatch(/^ {2}bootstrap --email E /);
      expect(stdout).toContain('--legacy');
      expect(stdout).not.toContain('create-api-key');
    }
  });

  it('pauses and resumes maintenance', async () => {
    try {
      const paused = await exec('node', [cli, 'maintenance', 'pause', '--json'], { env: process.env });
      expect(JSON.parse(paused.stdout)).toEqual({ paused: true });
      expect(await isWritePaused(ctx.deps.redis)).toBe(true);
      const resumed = await exec('node', [cli, 'maintenance', 'resume', '--json'], { env: process.env });
      expect(JSON.parse(resumed.stdout)).toEqual({ paused: false });
      expect(await isWritePaused(ctx.deps.redis)).toBe(false);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });

  it('refuses `clock advance` while a process runs without ENABLE_TEST_CLOCK=1, accepts it once all run with it', async () => {
    await ctx.deps.redis.del(RedisKeys.runningProcesses);
    const clock = (ms: number) =>
      exec('node', [cli, 'clock', 'advance', '--ms', String(ms), '--json'], { env: { ...process.env, ENABLE_TEST_CLOCK: '1' } }).then(
        ({ stdout }) => ({ code: 0, out: JSON.parse(stdout) }),
        (error: { code: number; stdout: string }) => ({ code: error.code, out: JSON.parse(error.stdout) }),
      );
    try {
      const production = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { ENABLE_TEST_CLOCK: '0' });
      try {
        expect(await clock(10)).toEqual({
          code: 1,
          out: { error: 'test_clock_disabled', message: expect.stringContaining(`management (pid ${production.child.pid} on `) },
        });
        expect(await ctx.deps.redis.get(RedisKeys.testClockOffset)).toBeNull();
        // One process with it beside one without is still refused.
        const test = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { ENABLE_TEST_CLOCK: '1' });
        try {
          expect((await clock(10)).out).toMatchObject({ error: 'test_clock_disabled' });
          expect(await ctx.deps.redis.get(RedisKeys.testClockOffset)).toBeNull();
          await production.stop();
          expect(await clock(10)).toEqual({ code: 0, out: { offsetMs: 10 } });
        } finally {
          await test.stop();
        }
      } finally {
        await production.stop();
      }
    } finally {
      await resetTestClock(ctx.deps.redis);
    }
  });

  it('prints {error, message} and exits 1 on failure', async () => {
    const failure = await exec('node', [cli, 'clock', 'advance', '--ms', '10', '--json'], {
      env: { ...process.env, ENABLE_TEST_CLOCK: '0' },
    }).then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(JSON.parse(failure!.stdout)).toEqual({ error: 'test_clock_disabled', message: expect.any(String) });
    expect(await ctx.deps.redis.get(RedisKeys.testClockOffset)).toBeNull();
  });
});
