import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authenticateCliAccessToken, revokeCliClient } from '../management/oauth/cliTokens.js';
import { CLI_OAUTH_CLIENT_ID, CLI_OAUTH_CLIENT_NAME } from '../management/oauth/rules.js';
import { DEVICE_CODE_WINDOW_MS, USER_CODE_FAILURE_WINDOW_MS } from '../management/oauth/oauthThrottle.js';
import { displayUserCode, normaliseUserCode, USER_CODE_ALPHABET } from '../management/oauth/userCode.js';
import { csrfTokenFor } from '../management/auth/sessionAuth.js';
import { AppError } from '../shared/errors/index.js';
import { sha256Hex } from '../shared/secrets.js';
import {
  advanceClock,
  bootstrapWorkspace,
  createTestContext,
  freshClientIp,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import { type ConsoleUser, createConsoleUser } from './helpers/consoleUsers.js';
import { cliLogin } from './helpers/cliLogin.js';
import { freePort } from './helpers/ports.js';
import { waitFor } from './helpers/wait.js';

// Issue 28 item 1: the OAuth 2.0 device authorization grant (RFC 8628) of the account CLI
// (00-decisions §3; 03 Authentication "Account CLI OAuth"), over real HTTP against the real stores.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const READ = 'service:cli:contracts:read';
const WRITE = 'service:cli:contracts:write';
const USER_CODE_SHOWN = new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`);

let ctx: TestContext;
let base: string;
let user: ConsoleUser;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  user = await createConsoleUser(ctx);
});
afterAll(async () => {
  await ctx.close();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function send(
  method: 'GET' | 'POST',
  path: string,
  init: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const response = await fetch(`${base}${path}`, { method, headers, body });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> } satisfies Answer;
}

function expectOAuthError(answer: Answer, status: number, error: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body).toEqual({ error });
  expect(answer.headers.get('cache-control')).toBe('no-store');
}

const sessionHeaders = (sessionToken: string) => ({ cookie: `session=${sessionToken}`, origin: ctx.deps.config.consoleOrigin });

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function deviceCode(scope = `${READ} offline_access`): Promise<DeviceAuthorization> {
  const answer = await send('POST', '/oauth/device/code', { form: { client_id: CLI_OAUTH_CLIENT_ID, scope } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as unknown as DeviceAuthorization;
}

const consent = (userCode: string, decision: 'approve' | 'deny', sessionToken = user.sessionToken, headers: Record<string, string> = {}) =>
  send('POST', '/oauth/device/consent', {
    json: { user_code: userCode, decision },
    headers: { ...sessionHeaders(sessionToken), ...headers },
  });

const readAuthorization = (userCode: string, sessionToken = user.sessionToken) =>
  send('GET', `/oauth/device/authorization?user_code=${encodeURIComponent(userCode)}`, { headers: sessionHeaders(sessionToken) });

const poll = (device: { device_code: string }) =>
  send('POST', '/oauth/token', { form: { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: CLI_OAUTH_CLIENT_ID } });

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  send('POST', '/oauth/token', {
    form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLI_OAUTH_CLIENT_ID, ...extra },
  });

const revoke = (token: string, extra: Record<string, string> = {}) =>
  send('POST', '/oauth/revoke', { form: { token, client_id: CLI_OAUTH_CLIENT_ID, ...extra } });

interface Tokens {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** A device login approved by `user`, exchanged once. */
async function login(scope = `${READ} offline_access`): Promise<Tokens> {
  const device = await deviceCode(scope);
  expect((await consent(device.user_code, 'approve')).status).toBe(200);
  const answer = await poll(device);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as unknown as Tokens;
}

/** The principal of an access token now, or the error code it is refused with. */
async function principalOf(accessToken: string): Promise<{ clientId: string; userId: string; scopes: readonly string[] } | string> {
  try {
    const { clientId, userId, scopes } = await authenticateCliAccessToken(ctx.deps.pool, `Bearer ${accessToken}`, ctx.deps.clock.nowMs());
    return { clientId, userId, scopes };
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

async function clientOf(accessToken: string): Promise<string> {
  const { rows } = await ctx.deps.pool.query<{ client_id: string }>('SELECT client_id FROM cli_tokens WHERE token_hash = $1', [
    sha256Hex(accessToken),
  ]);
  return rows[0].client_id;
}

describe('POST /oauth/device/code', () => {
  it('answers a form request with a device code, a user code and the console verification page', async () => {
    const answer = await send('POST', '/oauth/device/code', { form: { client_id: CLI_OAUTH_CLIENT_ID, scope: `${READ} offline_access` } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const device = answer.body as unknown as DeviceAuthorization;
    expect(Object.keys(device).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    expect(device.user_code).toMatch(USER_CODE_SHOWN);
    expect(device.device_code).toMatch(/^svc_cli_dc_[A-Za-z0-9_-]{43}$/);
    expect(device.verification_uri).toBe(`${ctx.deps.config.consoleOrigin}/device`);
    expect(device.verification_uri_complete).toBe(`${ctx.deps.config.consoleOrigin}/device?user_code=${device.user_code}`);
    expect(device.expires_in).toBe(600);
    expect(device.interval).toBe(5);
    // Only the device code's hash is stored; the user code without its dash.
    const { rows } = await ctx.deps.pool.query('SELECT * FROM oauth_device_authorizations WHERE device_code_hash = $1', [
      sha256Hex(device.device_code),
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user_code: device.user_code.replace('-', ''), status: 'pending', scopes: [READ, 'offline_access'] });
    expect(JSON.stringify(rows[0])).not.toContain(device.device_code);
  });

  it('takes JSON too, and orders and de-duplicates the scopes', async () => {
    const answer = await send('POST', '/oauth/device/code', {
      json: { client_id: CLI_OAUTH_CLIENT_ID, scope: `offline_access ${WRITE} ${READ}  ${WRITE}` },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const view = await readAuthorization(String(answer.body.user_code));
    expect(view.body.scopes).toEqual([READ, WRITE, 'offline_access']);
  });

  it('refuses any client but the CLI with 401 invalid_client', async () => {
    for (const form of [{ client_id: 'other-client', scope: READ }, { scope: READ }, { client_id: '', scope: READ }] as Record<
      string,
      string
    >[]) {
      expectOAuthError(await send('POST', '/oauth/device/code', { form }), 401, 'invalid_client');
    }
  });

  it('refuses unknown scopes, and a request without a CLI scope, with 400 invalid_scope', async () => {
    for (const scope of [
      'service:cli:contracts:delete',
      `${READ} contracts:read`,
      `${READ} openid`,
      'service:setup:integrations:delete',
      'offline_access',
      '',
      `${READ}\toffline_access`,
    ]) {
      expectOAuthError(await send('POST', '/oauth/device/code', { form: { client_id: CLI_OAUTH_CLIENT_ID, scope } }), 400, 'invalid_scope');
    }
    expectOAuthError(await send('POST', '/oauth/device/code', { form: { client_id: CLI_OAUTH_CLIENT_ID } }), 400, 'invalid_scope');
  });

  it('answers a repeated or malformed parameter with 400 invalid_request', async () => {
    const repeated = await fetch(`${base}/oauth/device/code`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${CLI_OAUTH_CLIENT_ID}&scope=${READ}&scope=${WRITE}`,
    });
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toEqual({ error: 'invalid_request' });
    expectOAuthError(
      await send('POST', '/oauth/device/code', { json: { client_id: CLI_OAUTH_CLIENT_ID, scope: 42 } }),
      400,
      'invalid_request',
    );
  });
});

describe('consent', () => {
  it('shows the exact permissions asked, then records the approval once', async () => {
    const device = await deviceCode(`${READ} ${WRITE} offline_access`);
    const view = await readAuthorization(device.user_code);
    expect(view.status, JSON.stringify(view.body)).toBe(200);
    expect(view.body).toEqual({
      userCode: device.user_code,
      clientId: CLI_OAUTH_CLIENT_ID,
      clientName: CLI_OAUTH_CLIENT_NAME,
      scopes: [READ, WRITE, 'offline_access'],
      expiresAt: expect.any(String),
    });
    const stored = await ctx.deps.pool.query<{ created_at: Date; expires_at: Date }>(
      'SELECT created_at, expires_at FROM oauth_device_authorizations WHERE device_code_hash = $1',
      [sha256Hex(device.device_code)],
    );
    expect(view.body.expiresAt).toBe(stored.rows[0].expires_at.toISOString());
    expect(stored.rows[0].expires_at.getTime() - stored.rows[0].created_at.getTime()).toBe(600_000);
    const approved = await consent(device.user_code, 'approve');
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toEqual({ decision: 'approve' });
    // Single use: decided codes name nothing any more.
    expectOAuthError(await consent(device.user_code, 'approve'), 400, 'invalid_grant');
    expectOAuthError(await consent(device.user_code, 'deny'), 400, 'invalid_grant');
    expectOAuthError(await readAuthorization(device.user_code), 400, 'invalid_grant');
  });

  it('normalises the typed user code: case, dash and spaces', async () => {
    expect(normaliseUserCode(' bcdf-ghjk ')).toBe('BCDFGHJK');
    expect(normaliseUserCode('BcDf GhJk')).toBe('BCDFGHJK');
    expect(normaliseUserCode('BCDF-GHJ0')).toBeNull();
    expect(normaliseUserCode('BCDF-GHJKL')).toBeNull();
    expect(normaliseUserCode('BCDFGHß')).toBeNull();
    const first = await deviceCode();
    const typed = ` ${first.user_code.toLowerCase().replace('-', ' ')} `;
    expect((await readAuthorization(typed)).status).toBe(200);
    expect((await consent(typed, 'approve')).status).toBe(200);
    const second = await deviceCode();
    expect((await consent(second.user_code.replace('-', ''), 'approve')).status).toBe(200);
    expect(displayUserCode(second.user_code.replace('-', ''))).toBe(second.user_code);
  });

  it('needs a verified e-mail (403 email_verification_required), a session (401) and a same-origin write (403)', async () => {
    const device = await deviceCode();
    const unverified = await createConsoleUser(ctx, { verified: false });
    expectOAuthError(await consent(device.user_code, 'approve', unverified.sessionToken), 403, 'email_verification_required');
    expectOAuthError(await readAuthorization(device.user_code, unverified.sessionToken), 403, 'email_verification_required');
    const noSession = await send('POST', '/oauth/device/consent', {
      json: { user_code: device.user_code, decision: 'approve' },
      headers: { origin: ctx.deps.config.consoleOrigin },
    });
    expectOAuthError(noSession, 401, 'unauthenticated');
    expectOAuthError(
      await consent(device.user_code, 'approve', user.sessionToken, { origin: 'https://attacker.example' }),
      403,
      'forbidden',
    );
    const noOrigin = await send('POST', '/oauth/device/consent', {
      json: { user_code: device.user_code, decision: 'approve' },
      headers: { cookie: `session=${user.sessionToken}` },
    });
    expectOAuthError(noOrigin, 403, 'forbidden');
    // None of these decided anything: the code is still pending.
    expectOAuthError(await poll(device), 400, 'authorization_pending');
    // The session's CSRF token stands in for the Origin header.
    const { rows } = await ctx.deps.pool.query<{ id: string }>('SELECT id FROM sessions WHERE token_hash = $1', [
      sha256Hex(user.sessionToken),
    ]);
    const withCsrf = await send('POST', '/oauth/device/consent', {
      json: { user_code: device.user_code, decision: 'approve' },
      headers: { cookie: `session=${user.sessionToken}`, 'x-csrf-token': csrfTokenFor(rows[0].id, ctx.deps.config.secretEncryptionKey) },
    });
    expect(withCsrf.status, JSON.stringify(withCsrf.body)).toBe(200);
  });

  it('answers unknown and malformed codes and bad bodies without deciding anything', async () => {
    expectOAuthError(await consent('BBBB-BBBB', 'approve'), 400, 'invalid_grant');
    expectOAuthError(await consent('not a code', 'approve'), 400, 'invalid_grant');
    expectOAuthError(await readAuthorization('BBBB-BBBB'), 400, 'invalid_grant');
    const device = await deviceCode();
    const bad = await send('POST', '/oauth/device/consent', {
      json: { user_code: device.user_code, decision: 'maybe' },
      headers: sessionHeaders(user.sessionToken),
    });
    expectOAuthError(bad, 400, 'invalid_request');
    expectOAuthError(await poll(device), 400, 'authorization_pending');
  });
});

describe('POST /oauth/token: device code', () => {
  it('answers authorization_pending, then slow_down with the interval grown by 5 s and kept grown', async () => {
    const device = await deviceCode();
    const interval = async () =>
      (
        await ctx.deps.pool.query<{ interval_seconds: number }>(
          'SELECT interval_seconds FROM oauth_device_authorizations WHERE device_code_hash = $1',
          [sha256Hex(device.device_code)],
        )
      ).rows[0].interval_seconds;
    expectOAuthError(await poll(device), 400, 'authorization_pending');
    // At once again: sooner than 5 s after the previous poll.
    expectOAuthError(await poll(device), 400, 'slow_down');
    expect(await interval()).toBe(10);
    // 6 s later is within the grown interval: slow_down again, and it grows again.
    await advanceClock(ctx, 6_000);
    expectOAuthError(await poll(device), 400, 'slow_down');
    expect(await interval()).toBe(15);
    await advanceClock(ctx, 15_000);
    expectOAuthError(await poll(device), 400, 'authorization_pending');
    expect(await interval()).toBe(15);
  });

  it('issues tokens once after approval', async () => {
    const device = await deviceCode(`${READ} ${WRITE} offline_access`);
    expectOAuthError(await poll(device), 400, 'authorization_pending');
    expect((await consent(device.user_code, 'approve')).status).toBe(200);
    const answer = await poll(device);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('pragma')).toBe('no-cache');
    const tokens = answer.body as unknown as Tokens;
    expect(Object.keys(tokens).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: `${READ} ${WRITE} offline_access` });
    expect(tokens.access_token).toMatch(/^svc_cli_at_[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^svc_cli_rt_[A-Za-z0-9_-]{43}$/);
    // Once: the device code is spent.
    expectOAuthError(await poll(device), 400, 'invalid_grant');
    const principal = await principalOf(tokens.access_token);
    expect(principal).toEqual({
      clientId: expect.stringMatching(/^clic_[0-9a-z]{26}$/),
      userId: user.userId,
      scopes: [READ, WRITE, 'offline_access'],
    });
    // The CLI client: one per approved device login, and only hashes of its tokens.
    const clientId = (principal as { clientId: string }).clientId;
    const client = await ctx.deps.pool.query('SELECT user_id, scopes, revoked_at, last_used_at FROM cli_clients WHERE id = $1', [clientId]);
    expect(client.rows[0]).toMatchObject({ user_id: user.userId, scopes: [READ, WRITE, 'offline_access'], revoked_at: null });
    const stored = await ctx.deps.pool.query('SELECT * FROM cli_tokens WHERE client_id = $1', [clientId]);
    expect(stored.rows.map((row) => row.kind).sort()).toEqual(['access', 'refresh']);
    expect(JSON.stringify(stored.rows)).not.toContain(tokens.access_token);
    expect(JSON.stringify(stored.rows)).not.toContain(tokens.refresh_token);
  });

  it('answers access_denied after a denial, for good', async () => {
    const device = await deviceCode();
    const denied = await consent(device.user_code, 'deny');
    expect(denied.status).toBe(200);
    expect(denied.body).toEqual({ decision: 'deny' });
    expectOAuthError(await poll(device), 400, 'access_denied');
    expectOAuthError(await poll(device), 400, 'access_denied');
    expectOAuthError(await consent(device.user_code, 'approve'), 400, 'invalid_grant');
  });

  it('answers expired_token past the device code lifetime, and the consent page cannot approve it', async () => {
    const device = await deviceCode();
    await advanceClock(ctx, 599_000);
    expectOAuthError(await poll(device), 400, 'authorization_pending');
    await advanceClock(ctx, 1_000);
    expectOAuthError(await poll(device), 400, 'expired_token');
    expectOAuthError(await readAuthorization(device.user_code), 400, 'invalid_grant');
    expectOAuthError(await consent(device.user_code, 'approve'), 400, 'invalid_grant');
    // Approved, but exchanged too late: expired as well.
    const late = await deviceCode();
    expect((await consent(late.user_code, 'approve')).status).toBe(200);
    await advanceClock(ctx, 600_000);
    expectOAuthError(await poll(late), 400, 'expired_token');
  });

  it('refuses other clients, unknown grants and unknown device codes', async () => {
    const device = await deviceCode();
    expectOAuthError(
      await send('POST', '/oauth/token', { form: { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: 'other' } }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await send('POST', '/oauth/token', { form: { grant_type: DEVICE_GRANT, device_code: device.device_code } }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await send('POST', '/oauth/token', { form: { grant_type: 'authorization_code', code: 'x', client_id: CLI_OAUTH_CLIENT_ID } }),
      400,
      'unsupported_grant_type',
    );
    expectOAuthError(await send('POST', '/oauth/token', { form: { client_id: CLI_OAUTH_CLIENT_ID } }), 400, 'invalid_request');
    expectOAuthError(
      await send('POST', '/oauth/token', { form: { grant_type: DEVICE_GRANT, client_id: CLI_OAUTH_CLIENT_ID } }),
      400,
      'invalid_request',
    );
    for (const code of [`svc_cli_dc_${'A'.repeat(43)}`, 'garbage', device.device_code.replace('svc_cli_dc_', 'svc_cli_rt_')]) {
      expectOAuthError(await poll({ device_code: code }), 400, 'invalid_grant');
    }
    // JSON bodies as well as forms.
    const json = await send('POST', '/oauth/token', {
      json: { grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: CLI_OAUTH_CLIENT_ID },
    });
    expectOAuthError(json, 400, 'authorization_pending');
  });

  it('issues no refresh token to a grant without offline_access', async () => {
    const tokens = await login(READ);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe(READ);
    expect(await principalOf(tokens.access_token)).toMatchObject({ scopes: [READ] });
  });
});

describe('access tokens', () => {
  it('last 15 minutes', async () => {
    const tokens = await login();
    await advanceClock(ctx, 899_000);
    expect(await principalOf(tokens.access_token)).toMatchObject({ userId: user.userId });
    await advanceClock(ctx, 1_000);
    expect(await principalOf(tokens.access_token)).toBe('unauthenticated');
  });

  it('are the only bearer that authenticates a CLI principal, and are no API key', async () => {
    const tokens = await login();
    const boot = await bootstrapWorkspace(ctx);
    for (const header of [
      undefined,
      '',
      tokens.access_token,
      `Basic ${tokens.access_token}`,
      `Bearer ${tokens.refresh_token}`,
      `Bearer ${boot.apiKey.key}`,
      `Bearer ${boot.sessionToken}`,
      `Bearer svc_cli_at_${'A'.repeat(43)}`,
      `Bearer ${tokens.access_token} `,
    ]) {
      await expect(authenticateCliAccessToken(ctx.deps.pool, header, ctx.deps.clock.nowMs())).rejects.toMatchObject({
        code: 'unauthenticated',
      });
    }
    // A workspace API route takes a CLI token only with its own exact CLI scope (03 Reviewed
    // repairs 5: `service:cli:integrations:read` here, which this token lacks), and a credential
    // route never (03 Account CLI OAuth 6).
    const apiRoute = await send('GET', '/v1/environments', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expectOAuthError(apiRoute, 403, 'insufficient_scope');
    const credentialRoute = await send('GET', '/v1/credential-operations/cop_unknown', {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expectOAuthError(credentialRoute, 403, 'cli_operation_forbidden');
  });
});

describe('POST /oauth/token: refresh', () => {
  it('rotates: a new access and refresh token each time, the old refresh token spent', async () => {
    const first = await login();
    const clientId = await clientOf(first.access_token);
    await advanceClock(ctx, 60_000);
    const answer = await refresh(first.refresh_token);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const second = answer.body as unknown as Tokens;
    expect(second).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: `${READ} offline_access` });
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await principalOf(second.access_token)).toMatchObject({ clientId, userId: user.userId });
    // The previous access token stays good until it expires.
    expect(await principalOf(first.access_token)).toMatchObject({ clientId });
    const third = (await refresh(second.refresh_token)).body as unknown as Tokens;
    expect(await principalOf(third.access_token)).toMatchObject({ clientId });
    // A refresh is a use of the client (60 s after its login on the test clock).
    const used = await ctx.deps.pool.query<{ created_at: Date; last_used_at: Date }>(
      'SELECT created_at, last_used_at FROM cli_clients WHERE id = $1',
      [clientId],
    );
    expect(used.rows[0].last_used_at.getTime() - used.rows[0].created_at.getTime()).toBeGreaterThanOrEqual(60_000);
  });

  it('revokes the whole grant when a rotated refresh token is used again', async () => {
    const first = await login();
    const clientId = await clientOf(first.access_token);
    const second = (await refresh(first.refresh_token)).body as unknown as Tokens;
    expect(await principalOf(second.access_token)).toMatchObject({ clientId });
    // The spent token again: a stolen copy.
    expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
    // Everything of the grant stopped working: the new refresh token and both access tokens.
    expectOAuthError(await refresh(second.refresh_token), 400, 'invalid_grant');
    expect(await principalOf(second.access_token)).toBe('unauthenticated');
    expect(await principalOf(first.access_token)).toBe('unauthenticated');
    const client = await ctx.deps.pool.query('SELECT revoked_at FROM cli_clients WHERE id = $1', [clientId]);
    expect(client.rows[0].revoked_at).not.toBeNull();
    const audit = await ctx.deps.pool.query("SELECT metadata FROM audit_events WHERE action = 'cli_client.revoke' AND target_id = $1", [
      clientId,
    ]);
    expect(audit.rows.map((row) => row.metadata.reason)).toEqual(['refresh_token_reuse']);
    // Another login of the same user is another grant, untouched.
    const other = await login();
    expect(await principalOf(other.access_token)).toMatchObject({ userId: user.userId });
  });

  it('needs a current consent: a revoked client cannot refresh', async () => {
    const tokens = await login();
    const clientId = await clientOf(tokens.access_token);
    await revokeCliClient(ctx.deps.pool, clientId, ctx.deps.clock.now());
    expectOAuthError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
    expect(await principalOf(tokens.access_token)).toBe('unauthenticated');
    // Idempotent.
    await revokeCliClient(ctx.deps.pool, clientId);
  });

  it('refuses an expired refresh token (30 days) and unknown ones', async () => {
    const tokens = await login();
    await advanceClock(ctx, 30 * 24 * 3600 * 1000);
    expectOAuthError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
    expectOAuthError(await refresh(`svc_cli_rt_${'A'.repeat(43)}`), 400, 'invalid_grant');
    expectOAuthError(await refresh(tokens.access_token), 400, 'invalid_grant');
    expectOAuthError(
      await send('POST', '/oauth/token', { form: { grant_type: 'refresh_token', client_id: CLI_OAUTH_CLIENT_ID } }),
      400,
      'invalid_request',
    );
    expectOAuthError(await refresh(tokens.refresh_token, { client_id: 'other' }), 401, 'invalid_client');
  });

  it('may narrow the access token to part of the grant, never widen it', async () => {
    const tokens = await login(`${READ} ${WRITE} offline_access`);
    expectOAuthError(await refresh(tokens.refresh_token, { scope: `${READ} service:cli:repairs:export` }), 400, 'invalid_scope');
    // A refused scope spends nothing.
    const narrowed = await refresh(tokens.refresh_token, { scope: READ });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    const body = narrowed.body as unknown as Tokens;
    expect(body.scope).toBe(READ);
    expect(await principalOf(body.access_token)).toMatchObject({ scopes: [READ] });
    // The new refresh token keeps the whole grant.
    const whole = (await refresh(body.refresh_token)).body as unknown as Tokens;
    expect(whole.scope).toBe(`${READ} ${WRITE} offline_access`);
  });
});

describe('POST /oauth/revoke', () => {
  it('revokes an access token alone', async () => {
    const tokens = await login();
    const answer = await revoke(tokens.access_token, { token_type_hint: 'access_token' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({});
    expect(await principalOf(tokens.access_token)).toBe('unauthenticated');
    // The grant goes on.
    const refreshed = (await refresh(tokens.refresh_token)).body as unknown as Tokens;
    expect(await principalOf(refreshed.access_token)).toMatchObject({ userId: user.userId });
  });

  it('revokes the whole grant with a refresh token, whatever the hint says', async () => {
    const tokens = await login();
    const clientId = await clientOf(tokens.access_token);
    expect((await revoke(tokens.refresh_token, { token_type_hint: 'access_token' })).status).toBe(200);
    expect(await principalOf(tokens.access_token)).toBe('unauthenticated');
    expectOAuthError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
    const client = await ctx.deps.pool.query('SELECT revoked_at FROM cli_clients WHERE id = $1', [clientId]);
    expect(client.rows[0].revoked_at).not.toBeNull();
  });

  it('answers 200 for unknown and already revoked tokens; 401 invalid_client and 400 invalid_request otherwise', async () => {
    for (const token of [`svc_cli_rt_${'A'.repeat(43)}`, `svc_cli_at_${'A'.repeat(43)}`, 'anything', 'svc_api_whatever']) {
      const answer = await revoke(token);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({});
    }
    const tokens = await login();
    expect((await revoke(tokens.refresh_token)).status).toBe(200);
    expect((await revoke(tokens.refresh_token)).status).toBe(200);
    expectOAuthError(
      await send('POST', '/oauth/revoke', { form: { token: tokens.access_token, client_id: 'other' } }),
      401,
      'invalid_client',
    );
    expectOAuthError(await send('POST', '/oauth/revoke', { form: { token: tokens.access_token } }), 401, 'invalid_client');
    expectOAuthError(await send('POST', '/oauth/revoke', { json: { client_id: CLI_OAUTH_CLIENT_ID } }), 400, 'invalid_request');
  });
});

describe('user code guessing limit', () => {
  let limited: TestContext;
  beforeAll(async () => {
    limited = await createTestContext({ OAUTH_USER_CODE_FAILURES_PER_USER: '3', OAUTH_USER_CODE_FAILURES_PER_ADDRESS: '5' });
  });
  afterAll(async () => {
    await limited.close();
  });

  const guess = (who: ConsoleUser, ip: string, userCode: string, how: 'read' | 'consent' = 'consent') =>
    how === 'read'
      ? limited.app.inject({
          method: 'GET',
          url: `/oauth/device/authorization?user_code=${encodeURIComponent(userCode)}`,
          remoteAddress: ip,
          headers: { cookie: `session=${who.sessionToken}` },
        })
      : limited.app.inject({
          method: 'POST',
          url: '/oauth/device/consent',
          remoteAddress: ip,
          headers: { cookie: `session=${who.sessionToken}`, origin: limited.deps.config.consoleOrigin },
          payload: { user_code: userCode, decision: 'approve' },
        });

  async function realCode(): Promise<string> {
    const answer = await limited.app.inject({
      method: 'POST',
      url: '/oauth/device/code',
      payload: { client_id: CLI_OAUTH_CLIENT_ID, scope: READ },
    });
    return answer.json().user_code as string;
  }

  it('counts failed lookups and consents per user: past the limit 429 rate_limited with Retry-After, even for a right code', async () => {
    const guesser = await createConsoleUser(limited);
    const code = await realCode();
    const valid = await realCode();
    // Successes do not count.
    expect((await guess(guesser, freshClientIp(), valid, 'read')).statusCode).toBe(200);
    for (const how of ['read', 'consent', 'read'] as const) {
      const res = await guess(guesser, freshClientIp(), 'BBBB-BBBB', how);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_grant' });
    }
    const blocked = await guess(guesser, freshClientIp(), code);
    expect(blocked.statusCode, blocked.body).toBe(429);
    expect(blocked.json()).toEqual({ error: 'rate_limited' });
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(USER_CODE_FAILURE_WINDOW_MS / 1000);
    // The code was not decided while blocked.
    const { rows } = await limited.deps.pool.query('SELECT status FROM oauth_device_authorizations WHERE user_code = $1', [
      code.replace('-', ''),
    ]);
    expect(rows[0].status).toBe('pending');
    // Another user is not blocked; the window ends.
    expect((await guess(await createConsoleUser(limited), freshClientIp(), code)).statusCode).toBe(200);
    await advanceClock(limited, USER_CODE_FAILURE_WINDOW_MS);
    expect((await guess(guesser, freshClientIp(), await realCode())).statusCode).toBe(200);
  });

  it('counts them per client address across users', async () => {
    const ip = freshClientIp();
    for (let i = 0; i < 5; i++) {
      expect((await guess(await createConsoleUser(limited), ip, 'CCCC-CCCC')).statusCode).toBe(400);
    }
    const code = await realCode();
    const blocked = await guess(await createConsoleUser(limited), ip, code);
    expect(blocked.statusCode, blocked.body).toBe(429);
    expect(blocked.json()).toEqual({ error: 'rate_limited' });
    expect((await guess(await createConsoleUser(limited), freshClientIp(), code)).statusCode).toBe(200);
  });
});

describe('device authorization requests per client address', () => {
  let limited: TestContext;
  beforeAll(async () => {
    limited = await createTestContext({ OAUTH_DEVICE_CODES_PER_ADDRESS_PER_HOUR: '2' });
  });
  afterAll(async () => {
    await limited.close();
  });

  const request = (ip: string, scope = READ) =>
    limited.app.inject({
      method: 'POST',
      url: '/oauth/device/code',
      remoteAddress: ip,
      payload: { client_id: CLI_OAUTH_CLIENT_ID, scope },
    });

  it('are limited per hour: past the limit 429 rate_limited with Retry-After; refused requests do not count', async () => {
    const ip = freshClientIp();
    expect((await request(ip, 'openid')).statusCode).toBe(400);
    expect((await request(ip)).statusCode).toBe(200);
    expect((await request(ip)).statusCode).toBe(200);
    const blocked = await request(ip);
    expect(blocked.statusCode, blocked.body).toBe(429);
    expect(blocked.json()).toEqual({ error: 'rate_limited' });
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(DEVICE_CODE_WINDOW_MS / 1000);
    expect((await request(freshClientIp())).statusCode).toBe(200);
    await advanceClock(limited, DEVICE_CODE_WINDOW_MS);
    expect((await request(ip)).statusCode).toBe(200);
  });
});

describe('cliLogin (test helper for the CLI routes)', () => {
  it('drives the real grant over HTTP and gives working tokens and the client id', async () => {
    const login = await cliLogin(base, user.sessionToken, [READ]);
    expect(login.clientId).toMatch(/^clic_/);
    expect(await principalOf(login.accessToken)).toEqual({
      clientId: login.clientId,
      userId: user.userId,
      scopes: [READ, 'offline_access'],
    });
    expect((await refresh(login.refreshToken)).status).toBe(200);
    const again = await cliLogin(base, user.sessionToken, [READ, WRITE], { db: ctx.deps.pool });
    expect(again.clientId).not.toBe(login.clientId);
    expect(await principalOf(again.accessToken)).toMatchObject({ clientId: again.clientId, scopes: [READ, WRITE, 'offline_access'] });
  });
});

describe('logs of the management process', () => {
  it('never hold a token, a device code or a session token, even at trace level', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/management/main.js'], {
      env: { ...process.env, MANAGEMENT_PORT: String(port), LOG_LEVEL: 'trace' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const url = `http://127.0.0.1:${port}`;
    const secrets: string[] = [];
    try {
      await waitFor(
        async () =>
          (await fetch(`${url}/healthz`).then(
            (r) => r.ok,
            () => false,
          )) || undefined,
        30_000,
        'the management plane',
      );
      const device = (await (
        await fetch(`${url}/oauth/device/code`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: CLI_OAUTH_CLIENT_ID, scope: READ }).toString(),
        })
      ).json()) as DeviceAuthorization;
      const login = await cliLogin(url, user.sessionToken, [READ]);
      const refreshed = (await (
        await fetch(`${url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: login.refreshToken,
            client_id: CLI_OAUTH_CLIENT_ID,
          }).toString(),
        })
      ).json()) as Tokens;
      // A reuse (an error answer) and a revocation are logged too.
      await fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: login.refreshToken, client_id: CLI_OAUTH_CLIENT_ID }),
      });
      await fetch(`${url}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${refreshed.access_token}` },
        body: JSON.stringify({ token: refreshed.access_token, client_id: CLI_OAUTH_CLIENT_ID }),
      });
      secrets.push(
        device.device_code,
        login.accessToken,
        login.refreshToken,
        refreshed.access_token,
        refreshed.refresh_token,
        user.sessionToken,
      );
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    // The requests were logged (so the check below looks at real log lines)…
    expect(output).toContain('/oauth/token');
    expect(output).toContain('/oauth/device/consent');
    // …and no secret is in them.
    for (const secret of secrets) expect(output.includes(secret), 'a secret in the logs').toBe(false);
  });
});
