import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authenticateCliAccessToken } from '../management/oauth/cliTokens.js';
import { CLI_OAUTH_CLIENT_ID } from '../management/oauth/rules.js';
import { sha256Hex } from '../shared/secrets.js';
import { advanceClock, createTestContext, resetClockAndHooks, type TestContext } from './helpers/context.js';
import { type ConsoleUser, createConsoleUser } from './helpers/consoleUsers.js';
import { waitFor } from './helpers/wait.js';

// Issue 28 item 1: the device grant and refresh rotation as a real OAuth client library runs them
// (openid-client 6: RFC 8628 polling, RFC 6749 refresh, RFC 7009 revocation), over HTTP. Its
// polling waits the server's `interval` (5 s) between polls on the real clock.

const READ = 'service:cli:incidents:read';

let ctx: TestContext;
let base: string;
let user: ConsoleUser;
let config: client.Configuration;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  user = await createConsoleUser(ctx);
  // Static metadata (the service publishes no discovery document); a public client, no secret.
  config = new client.Configuration(
    {
      issuer: base,
      device_authorization_endpoint: `${base}/oauth/device/code`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
    },
    CLI_OAUTH_CLIENT_ID,
    undefined,
    client.None(),
  );
  client.allowInsecureRequests(config);
});
afterAll(async () => {
  await ctx.close();
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
});

async function consent(userCode: string, decision: 'approve' | 'deny'): Promise<void> {
  const response = await fetch(`${base}/oauth/device/consent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `session=${user.sessionToken}`, origin: ctx.deps.config.consoleOrigin },
    body: JSON.stringify({ user_code: userCode, decision }),
  });
  expect(response.status).toBe(200);
}

const lastPolledAt = async (deviceCode: string) =>
  (
    await ctx.deps.pool.query<{ last_polled_at: Date | null }>(
      'SELECT last_polled_at FROM oauth_device_authorizations WHERE device_code_hash = $1',
      [sha256Hex(deviceCode)],
    )
  ).rows[0].last_polled_at;

const principalOf = (accessToken: string) => authenticateCliAccessToken(ctx.deps.pool, `Bearer ${accessToken}`, ctx.deps.clock.nowMs());

/** The OAuth error a rejected call of the library carries. */
async function oauthErrorOf(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(client.ResponseBodyError);
  return (error as client.ResponseBodyError).error;
}

async function libraryLogin(scope: string): Promise<client.TokenEndpointResponse> {
  const device = await client.initiateDeviceAuthorization(config, { scope });
  await consent(device.user_code, 'approve');
  return client.pollDeviceAuthorizationGrant(config, device);
}

describe('openid-client against the service', () => {
  it('runs the device flow: pending while nobody has consented, tokens after the approval', async () => {
    const device = await client.initiateDeviceAuthorization(config, { scope: `${READ} offline_access` });
    expect(device.interval).toBe(5);
    expect(device.verification_uri_complete).toBe(`${ctx.deps.config.consoleOrigin}/device?user_code=${device.user_code}`);
    const polling = client.pollDeviceAuthorizationGrant(config, device);
    // The library's first poll is answered authorization_pending, and it keeps polling.
    await waitFor(async () => (await lastPolledAt(device.device_code)) ?? undefined, 20_000, 'the first poll');
    await consent(device.user_code, 'approve');
    const tokens = await polling;
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope).toBe(`${READ} offline_access`);
    expect(tokens.refresh_token).toMatch(/^svc_cli_rt_/);
    expect(await principalOf(tokens.access_token)).toMatchObject({ kind: 'cli', userId: user.userId, scopes: [READ, 'offline_access'] });
  });

  it('reports a denial and an expired device code as the RFC 8628 errors', async () => {
    const denied = await client.initiateDeviceAuthorization(config, { scope: READ });
    await consent(denied.user_code, 'deny');
    const expired = await client.initiateDeviceAuthorization(config, { scope: READ });
    // Before the library's first poll (5 s from now), the service's clock passes the code's 10 minutes.
    await advanceClock(ctx, 600_000);
    const [deniedError, expiredError] = await Promise.all([
      oauthErrorOf(client.pollDeviceAuthorizationGrant(config, denied)),
      oauthErrorOf(client.pollDeviceAuthorizationGrant(config, expired)),
    ]);
    expect(deniedError).toBe('access_denied');
    expect(expiredError).toBe('expired_token');
  });

  it('refreshes with rotation; reusing a rotated refresh token revokes the grant', async () => {
    const tokens = await libraryLogin(`${READ} offline_access`);
    const first = tokens.refresh_token as string;
    const refreshed = await client.refreshTokenGrant(config, first);
    expect(refreshed.refresh_token).toMatch(/^svc_cli_rt_/);
    expect(refreshed.refresh_token).not.toBe(first);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(await principalOf(refreshed.access_token)).toMatchObject({ userId: user.userId });
    expect(await oauthErrorOf(client.refreshTokenGrant(config, first))).toBe('invalid_grant');
    expect(await oauthErrorOf(client.refreshTokenGrant(config, refreshed.refresh_token as string))).toBe('invalid_grant');
    await expect(principalOf(refreshed.access_token)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('revokes a grant through the revocation endpoint', async () => {
    const tokens = await libraryLogin(`${READ} offline_access`);
    await client.tokenRevocation(config, tokens.refresh_token as string, { token_type_hint: 'refresh_token' });
    await expect(principalOf(tokens.access_token)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(await oauthErrorOf(client.refreshTokenGrant(config, tokens.refresh_token as string))).toBe('invalid_grant');
  });
});
