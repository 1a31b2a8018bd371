import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_OAUTH_CLIENT_ID } from '../management/oauth/rules.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { advanceClock, bootstrapWorkspace, createTestContext, resetClockAndHooks, type TestContext } from './helpers/context.js';
import { createIntegration, type CreatedIntegration } from './helpers/integrations.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';

// Issue 28, "Done means": the whole device grant against the running management plane (the
// compiled process), as the CLI lives it: device code, polling before consent and too fast,
// consent by a console session, token, a workspace route, refresh rotation, reuse of a spent
// refresh token revoking the grant, revocation, and logout (DELETE /v1/cli/session) ending access
// and refresh. Time moves with the test clock, which the spawned process honours.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const SCOPES = 'service:cli:observations:read service:cli:incidents:read offline_access';

let ctx: TestContext;
let management: SpawnedProcess;
let owner: BootstrapResult;
let integration: CreatedIntegration;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${management.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function cli(method: 'GET' | 'DELETE', path: string, accessToken: string, workspace?: string): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${accessToken}` };
  if (workspace !== undefined) headers['x-service-workspace'] = workspace;
  const response = await fetch(`${management.url}${path}`, { method, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const poll = (deviceCode: string) =>
  post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: CLI_OAUTH_CLIENT_ID });
const refresh = (refreshToken: string) =>
  post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLI_OAUTH_CLIENT_ID });

/** The console's consent, as the consent page sends it: the session cookie and the console's Origin. */
async function consent(userCode: string, decision: 'approve' | 'deny'): Promise<Answer> {
  const response = await fetch(`${management.url}/oauth/device/consent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `session=${owner.sessionToken}`, origin: management.url },
    body: JSON.stringify({ user_code: userCode, decision }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A device login approved by the owner, exchanged for its first tokens. */
async function login(): Promise<{ access: string; refresh: string }> {
  const code = await post('/oauth/device/code', { client_id: CLI_OAUTH_CLIENT_ID, scope: SCOPES });
  expect((await consent(String(code.body.user_code), 'approve')).status).toBe(200);
  const tokens = await poll(String(code.body.device_code));
  expect(tokens.status).toBe(200);
  return { access: String(tokens.body.access_token), refresh: String(tokens.body.refresh_token) };
}

beforeAll(async () => {
  ctx = await createTestContext();
  const port = await freePort();
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { CONSOLE_ORIGIN: `http://127.0.0.1:${port}` }, port);
  owner = await bootstrapWorkspace(ctx);
  integration = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
});

afterAll(async () => {
  await management?.stop();
  await resetClockAndHooks(ctx);
  await ctx.close();
});

describe('the account CLI device grant, end to end against the running management plane', () => {
  it('logs in, reads a workspace, rotates, revokes on reuse, revokes and logs out', { timeout: 60_000 }, async () => {
    const verifyPath = `/v1/cli/connections/${integration.integration.connectionId}/verify`;
    const code = await post('/oauth/device/code', { client_id: CLI_OAUTH_CLIENT_ID, scope: SCOPES });
    expect(code.status).toBe(200);
    expect(code.body).toMatchObject({ interval: 5, verification_uri: `${management.url}/device` });
    const deviceCode = String(code.body.device_code);

    // Before consent: pending; polled again at once: slow_down, and the interval grows by 5 s,
    // so a poll 7 s later (past the first interval, not the grown one) is too fast again.
    expect(await poll(deviceCode)).toEqual({ status: 400, body: { error: 'authorization_pending' } });
    expect(await poll(deviceCode)).toEqual({ status: 400, body: { error: 'slow_down' } });
    await advanceClock(ctx, 7_000);
    expect(await poll(deviceCode)).toEqual({ status: 400, body: { error: 'slow_down' } });
    await advanceClock(ctx, 16_000);
    expect(await poll(deviceCode)).toEqual({ status: 400, body: { error: 'authorization_pending' } });

    expect(await consent(String(code.body.user_code), 'approve')).toEqual({ status: 200, body: { decision: 'approve' } });
    await advanceClock(ctx, 21_000);
    const first = await poll(deviceCode);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: SCOPES });
    // Exchanged once.
    expect(await poll(deviceCode)).toEqual({ status: 400, body: { error: 'invalid_grant' } });

    // A workspace route with the access token and the workspace header.
    const access = String(first.body.access_token);
    const verified = await cli('GET', verifyPath, access, owner.workspace.slug);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({
      connectionId: integration.integration.connectionId,
      mode: 'sandbox',
      credentialStatus: 'active',
    });

    // Refresh rotates: a new pair that works; the spent refresh token, used again, revokes the grant.
    const rotated = await refresh(String(first.body.refresh_token));
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await cli('GET', verifyPath, String(rotated.body.access_token), owner.workspace.slug)).status).toBe(200);
    expect(await refresh(String(first.body.refresh_token))).toEqual({ status: 400, body: { error: 'invalid_grant' } });
    expect(await refresh(String(rotated.body.refresh_token))).toEqual({ status: 400, body: { error: 'invalid_grant' } });
    expect(await cli('GET', '/v1/cli/me', String(rotated.body.access_token))).toEqual({ status: 401, body: { error: 'unauthenticated' } });

    // RFC 7009: revoking an access token ends it alone; revoking a refresh token ends the grant.
    const second = await login();
    expect(await post('/oauth/revoke', { token: second.access, client_id: CLI_OAUTH_CLIENT_ID })).toEqual({ status: 200, body: {} });
    expect((await cli('GET', '/v1/cli/me', second.access)).status).toBe(401);
    const afterRevoke = await refresh(second.refresh);
    expect(afterRevoke.status).toBe(200);
    expect(await post('/oauth/revoke', { token: String(afterRevoke.body.refresh_token), client_id: CLI_OAUTH_CLIENT_ID })).toEqual({
      status: 200,
      body: {},
    });
    expect((await cli('GET', '/v1/cli/me', String(afterRevoke.body.access_token))).status).toBe(401);

    // Logout: access and refresh both end.
    const third = await login();
    expect((await cli('GET', '/v1/cli/me', third.access)).status).toBe(200);
    expect(await cli('DELETE', '/v1/cli/session', third.access)).toEqual({ status: 200, body: { schemaVersion: 1, revoked: true } });
    expect(await cli('GET', verifyPath, third.access, owner.workspace.slug)).toEqual({ status: 401, body: { error: 'unauthenticated' } });
    expect(await refresh(third.refresh)).toEqual({ status: 400, body: { error: 'invalid_grant' } });
  });
});
