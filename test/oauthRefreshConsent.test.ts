import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { CLI_OAUTH_CLIENT_ID, SETUP_OAUTH_CLIENT_ID } from '../management/oauth/rules.js';
import { callCli, loginCli, serveOnLoopback } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser, type ConsoleUser } from './helpers/consoleUsers.js';
import {
  bootstrapWorkspace,
  callWithSession,
  createTestContext,
  expectError,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';
import { contractsUrl } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';

// A refresh needs "the same current consent" (03 Account CLI OAuth 2). For a setup grant that
// includes its approver's standing (01 Authentication 4: an owner or admin of the bound
// workspace); a CLI grant is bound to no workspace, so membership changes leave its refresh
// alone and are answered per request. And a setup grant's revocation by refresh-token reuse is
// its workspace's audit event. Through the real OAuth routes, PostgreSQL and Redis.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CONTRACTS_READ = 'service:setup:contracts:read';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

let ctx: TestContext;
let baseUrl: string;
let owner: BootstrapResult;
let connectionId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
  owner = await bootstrapWorkspace(ctx);
  connectionId = (await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' })).integration.connectionId;
});
afterAll(async () => {
  await ctx.close();
});

function oauth(url: string, body: Record<string, string>): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: 'POST', url, payload: body });
}

const refresh = (clientId: string, refreshToken: string) =>
  oauth('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

/** A setup login approved by `approver` (an owner or admin of the connection's workspace). */
async function setupLogin(approver: ConsoleUser | BootstrapResult): Promise<Tokens> {
  const device = await oauth('/oauth/device/code', {
    client_id: SETUP_OAUTH_CLIENT_ID,
    scope: `${CONTRACTS_READ} offline_access`,
    connection_id: connectionId,
  });
  expect(device.statusCode, device.body).toBe(200);
  const { device_code, user_code } = device.json();
  const consent = await callWithSession(ctx, approver.sessionToken, 'POST', '/oauth/device/consent', {
    body: { user_code, decision: 'approve' },
  });
  expect(consent.statusCode, consent.body).toBe(200);
  const tokens = await oauth('/oauth/token', { grant_type: DEVICE_GRANT, device_code, client_id: SETUP_OAUTH_CLIENT_ID });
  expect(tokens.statusCode, tokens.body).toBe(200);
  return tokens.json();
}

/** Every grant, token and audit row of the service: equal before and after proves a refusal wrote nothing. */
async function grantState(): Promise<unknown> {
  const { rows } = await ctx.deps.pool.query(
    `SELECT (SELECT json_agg(json_build_array(id, revoked_at, last_used_at) ORDER BY id) FROM cli_clients) AS clients,
            (SELECT json_agg(json_build_array(token_hash, revoked_at, used_at) ORDER BY token_hash) FROM cli_tokens) AS tokens,
            (SELECT max(id) FROM audit_events) AS audit`,
  );
  return rows[0];
}

const setRole = (userId: string, role: 'owner' | 'admin' | 'viewer') =>
  ctx.deps.pool.query('UPDATE workspace_members SET role = $3 WHERE workspace_id = $1 AND user_id = $2', [
    owner.workspace.id,
    userId,
    role,
  ]);

const listContracts = (accessToken: string) =>
  ctx.app.inject({ method: 'GET', url: contractsUrl(connectionId), headers: { authorization: `Bearer ${accessToken}` } });

describe('refreshing a setup grant', () => {
  it('refuses a refresh once the approver is a viewer (invalid_grant), revoking and spending nothing', async () => {
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, admin.userId, 'admin');
    const tokens = await setupLogin(admin);
    const cli = await loginCli(baseUrl, admin.sessionToken, ['contracts:read']);
    await setRole(admin.userId, 'viewer');

    const before = await grantState();
    expectError(await refresh(SETUP_OAUTH_CLIENT_ID, tokens.refresh_token), 400, 'invalid_grant');
    expect(await grantState()).toEqual(before);
    // Nothing else of the approver's is touched: their CLI grant refreshes.
    expect((await refresh(CLI_OAUTH_CLIENT_ID, cli.refreshToken)).statusCode).toBe(200);

    // The refusal spent nothing: with the role back, the same refresh token rotates.
    await setRole(admin.userId, 'admin');
    const rotated = await refresh(SETUP_OAUTH_CLIENT_ID, tokens.refresh_token);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect((await listContracts(rotated.json().access_token)).statusCode).toBe(200);
  });

  it('refuses a refresh once the approver left the workspace (invalid_grant), writing nothing', async () => {
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, admin.userId, 'admin');
    const tokens = await setupLogin(admin);
    const kept = await setupLogin(owner);
    await ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [owner.workspace.id, admin.userId]);

    const before = await grantState();
    expectError(await refresh(SETUP_OAUTH_CLIENT_ID, tokens.refresh_token), 400, 'invalid_grant');
    expect(await grantState()).toEqual(before);
    // The grants of the approvers who stayed refresh as before.
    expect((await refresh(SETUP_OAUTH_CLIENT_ID, kept.refresh_token)).statusCode).toBe(200);
  });

  it('records the revocation by reuse of a rotated refresh token in the bound workspace', async () => {
    const tokens = await setupLogin(owner);
    const rotated = await refresh(SETUP_OAUTH_CLIENT_ID, tokens.refresh_token);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expectError(await refresh(SETUP_OAUTH_CLIENT_ID, tokens.refresh_token), 400, 'invalid_grant');
    expectError(await listContracts(rotated.json().access_token), 401, 'unauthenticated');
    const { rows } = await ctx.deps.pool.query(
      `SELECT a.workspace_id, a.actor_type, a.action, a.metadata FROM audit_events a
        WHERE a.action LIKE '%client.revoke' AND a.target_id = (
          SELECT client_id FROM cli_tokens WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex'))`,
      [tokens.refresh_token],
    );
    expect(rows).toEqual([
      {
        workspace_id: owner.workspace.id,
        actor_type: 'system',
        action: 'setup_client.revoke',
        metadata: { reason: 'refresh_token_reuse', userId: owner.user.id },
      },
    ]);
  });
});

describe('refreshing a CLI grant', () => {
  // CLI tokens are account-wide (03 Account CLI OAuth 3, 7): the workspace is chosen per request
  // and its membership checked there, so losing one workspace does not end the grant.
  it('is not bound to a membership: a demoted or removed user refreshes, and the new token answers per workspace', async () => {
    const member = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, member.userId, 'admin');
    const cli = await loginCli(baseUrl, member.sessionToken, ['integrations:read', 'integrations:manage']);
    const workspace = owner.workspace.slug;

    await setRole(member.userId, 'viewer');
    const demoted = await refresh(CLI_OAUTH_CLIENT_ID, cli.refreshToken);
    expect(demoted.statusCode, demoted.body).toBe(200);
    const asViewer: Tokens = demoted.json();
    expect((await callCli(ctx, asViewer.access_token, 'GET', '/v1/integrations', { workspace })).statusCode).toBe(200);
    const write = await ctx.app.inject({
      method: 'POST',
      url: `/v1/connections/${connectionId}/reconciliation-rules`,
      headers: {
        authorization: `Bearer ${asViewer.access_token}`,
        'x-service-workspace': workspace,
        'idempotency-key': newIdempotencyKey(),
      },
      payload: { expectedRevision: '1', sourceEventType: 'order.paid', expectedObjectType: 'shipment', maxDelayMs: 60_000 },
    });
    expectError(write, 403, 'cli_operation_forbidden');

    await ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
      owner.workspace.id,
      member.userId,
    ]);
    const removed = await refresh(CLI_OAUTH_CLIENT_ID, asViewer.refresh_token);
    expect(removed.statusCode, removed.body).toBe(200);
    const { access_token } = removed.json() as Tokens;
    expectError(await callCli(ctx, access_token, 'GET', '/v1/integrations', { workspace }), 404, 'workspace_not_found');
    const me = await callCli(ctx, access_token, 'GET', '/v1/cli/me');
    expect(me.statusCode, me.body).toBe(200);
    const workspaces = await callCli(ctx, access_token, 'GET', '/v1/cli/workspaces');
    expect(workspaces.json().items).toEqual([]);
  });

  it('records its revocation by reuse at the account level (no workspace)', async () => {
    const cli = await loginCli(baseUrl, owner.sessionToken, ['integrations:read']);
    expect((await refresh(CLI_OAUTH_CLIENT_ID, cli.refreshToken)).statusCode).toBe(200);
    expectError(await refresh(CLI_OAUTH_CLIENT_ID, cli.refreshToken), 400, 'invalid_grant');
    const { rows } = await ctx.deps.pool.query(
      "SELECT workspace_id, action, metadata FROM audit_events WHERE action LIKE '%client.revoke' AND target_id = $1",
      [cli.clientId],
    );
    expect(rows).toEqual([
      { workspace_id: null, action: 'cli_client.revoke', metadata: { reason: 'refresh_token_reuse', userId: owner.user.id } },
    ]);
  });
});
