import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { errorInWords } from '../management/console/errorWords.js';
import { SETUP_SCOPE_WORDS } from '../management/console/scopeWords.js';
import { CLI_OAUTH_CLIENT_ID, SETUP_OAUTH_CLIENT_ID, SETUP_OAUTH_CLIENT_NAME } from '../management/oauth/rules.js';
import { loginCli, serveOnLoopback } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  countRows,
  createTestContext,
  expectError,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';
import { activateUrl, contractState, contractsUrl, contractUrl, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';

// 01 Authentication 4: setup OAuth tokens of the local setup tool, issued by the device grant for
// the client `service-setup-tool`, bound to one connection (one approved Integration in one
// environment), through the real OAuth routes, PostgreSQL and Redis.

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CONTRACTS_READ = 'service:setup:contracts:read';
const INTEGRATIONS_DELETE = 'service:setup:integrations:delete';

let ctx: TestContext;
let baseUrl: string;
let owner: BootstrapResult;
let bound: { id: string; connectionId: string; environmentId: string };
let other: { id: string; connectionId: string };
let contractVersionId: string;

beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
  owner = await bootstrapWorkspace(ctx);
  const first = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Orders' });
  bound = { id: first.integration.id, connectionId: first.integration.connectionId, environmentId: first.integration.environmentId };
  const second = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Refunds' });
  other = { id: second.integration.id, connectionId: second.integration.connectionId };
  contractVersionId = (await registerDraft(ctx, owner.apiKey.key, bound.connectionId, openApiRegistration('1.0.0'))).contract.id;
  await registerDraft(ctx, owner.apiKey.key, other.connectionId, openApiRegistration('1.0.0'));
});
afterAll(async () => {
  await ctx.close();
});

function oauth(url: string, body: Record<string, string>): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: 'POST', url, payload: body });
}

function callWithToken(token: string, method: 'GET' | 'POST', url: string, body?: unknown, idempotencyKey?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return ctx.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
}

async function requestSetupCode(connectionId: string, scopes: readonly string[]): Promise<{ device_code: string; user_code: string }> {
  const res = await oauth('/oauth/device/code', {
    client_id: SETUP_OAUTH_CLIENT_ID,
    scope: [...scopes, 'offline_access'].join(' '),
    connection_id: connectionId,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function consent(sessionToken: string, userCode: string, decision: 'approve' | 'deny' = 'approve') {
  return callWithSession(ctx, sessionToken, 'POST', '/oauth/device/consent', { body: { user_code: userCode, decision } });
}

function exchange(deviceCode: string, clientId = SETUP_OAUTH_CLIENT_ID) {
  return oauth('/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });
}

/** A setup login through the real grant: device code naming the connection, the owner's consent, the exchange. */
async function setupLogin(
  connectionId: string,
  scopes: readonly string[] = [CONTRACTS_READ],
): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const device = await requestSetupCode(connectionId, scopes);
  const approved = await consent(owner.sessionToken, device.user_code);
  expect(approved.statusCode, approved.body).toBe(200);
  const tokens = await exchange(device.device_code);
  expect(tokens.statusCode, tokens.body).toBe(200);
  return tokens.json();
}

const auditCount = () => countRows(ctx, 'audit_events', 'workspace_id = $1', [owner.workspace.id]);

describe('issuing a setup token', () => {
  it('shows the owner the Integration, environment and scopes, and issues tokens of their own prefix bound to the connection', async () => {
    const device = await requestSetupCode(bound.connectionId, [CONTRACTS_READ, INTEGRATIONS_DELETE]);
    const view = await callWithSession(ctx, owner.sessionToken, 'GET', `/oauth/device/authorization?user_code=${device.user_code}`);
    expect(view.statusCode, view.body).toBe(200);
    expect(view.json()).toMatchObject({
      clientId: SETUP_OAUTH_CLIENT_ID,
      clientName: SETUP_OAUTH_CLIENT_NAME,
      scopes: [CONTRACTS_READ, INTEGRATIONS_DELETE, 'offline_access'],
      connection: {
        id: bound.connectionId,
        workspace: owner.workspace.slug,
        workspaceIntegrationId: bound.id,
        integrationName: 'Orders',
        environmentId: bound.environmentId,
        mode: 'sandbox',
      },
    });
    expect((await consent(owner.sessionToken, device.user_code)).statusCode).toBe(200);
    const tokens = await exchange(device.device_code);
    expect(tokens.statusCode, tokens.body).toBe(200);
    const body = tokens.json();
    expect(body.access_token).toMatch(/^svc_setup_at_[A-Za-z0-9_-]{43}$/);
    expect(body.refresh_token).toMatch(/^svc_setup_rt_[A-Za-z0-9_-]{43}$/);
    const { rows } = await ctx.deps.pool.query(
      `SELECT oauth_client_id, workspace_id, connection_id FROM cli_clients c
        WHERE EXISTS (SELECT 1 FROM cli_tokens t WHERE t.client_id = c.id AND t.token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex'))`,
      [body.access_token],
    );
    expect(rows).toEqual([{ oauth_client_id: SETUP_OAUTH_CLIENT_ID, workspace_id: owner.workspace.id, connection_id: bound.connectionId }]);
  });

  it('shows the Integration, environment and setup permissions on the device page, and a non-administrator why not', async () => {
    const device = await requestSetupCode(bound.connectionId, [CONTRACTS_READ]);
    const page = await callWithSession(ctx, owner.sessionToken, 'GET', `/device?user_code=${device.user_code}`);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    for (const text of [
      `<strong class="integration-name">Orders</strong>`,
      `<code class="connection-id">${bound.connectionId}</code>`,
      `<code class="workspace-slug">${owner.workspace.slug}</code>`,
      SETUP_SCOPE_WORDS[CONTRACTS_READ],
      'value="approve"',
    ]) {
      expect(page.body).toContain(text);
    }
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    const refused = await callWithSession(ctx, viewer.sessionToken, 'GET', `/device?user_code=${device.user_code}`);
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.body).not.toContain('Orders');
    expect(refused.body).not.toContain('value="approve"');
    expect(refused.body).toContain(errorInWords('code', 'forbidden'));
  });

  it('refuses the consent of a viewer or a non-member (403, nothing written, still pending for the owner)', async () => {
    const device = await requestSetupCode(bound.connectionId, [CONTRACTS_READ]);
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    const stranger = await createConsoleUser(ctx);
    const before = await auditCount();
    for (const user of [viewer, stranger]) {
      expectError(
        await callWithSession(ctx, user.sessionToken, 'GET', `/oauth/device/authorization?user_code=${device.user_code}`),
        403,
        'forbidden',
      );
      expectError(await consent(user.sessionToken, device.user_code), 403, 'forbidden');
      expectError(await consent(user.sessionToken, device.user_code, 'deny'), 403, 'forbidden');
    }
    expect(await auditCount()).toBe(before);
    expectError(await exchange(device.device_code), 400, 'authorization_pending');
    expect((await consent(owner.sessionToken, device.user_code)).statusCode).toBe(200);
    expect((await exchange(device.device_code)).statusCode).toBe(200);
  });

  it('lets an admin approve, and refuses a connection of no workspace the approver manages', async () => {
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, admin.userId, 'admin');
    const device = await requestSetupCode(bound.connectionId, [CONTRACTS_READ]);
    expect((await consent(admin.sessionToken, device.user_code)).statusCode).toBe(200);
    expect((await exchange(device.device_code)).statusCode).toBe(200);
    const foreign = await bootstrapWorkspace(ctx);
    const unknown = await requestSetupCode(`int_${'x'.repeat(26)}`, [CONTRACTS_READ]);
    expectError(await consent(foreign.sessionToken, unknown.user_code), 403, 'forbidden');
    const elsewhere = await requestSetupCode(bound.connectionId, [CONTRACTS_READ]);
    expectError(await consent(foreign.sessionToken, elsewhere.user_code), 403, 'forbidden');
  });

  it('keeps the clients apart: scopes, connection and codes of one are refused by the other', async () => {
    const base = { client_id: SETUP_OAUTH_CLIENT_ID, scope: CONTRACTS_READ };
    expectError(await oauth('/oauth/device/code', base), 400, 'invalid_request');
    expectError(await oauth('/oauth/device/code', { ...base, connection_id: other.id }), 400, 'invalid_request');
    expectError(
      await oauth('/oauth/device/code', { ...base, scope: 'service:cli:contracts:read', connection_id: bound.connectionId }),
      400,
      'invalid_scope',
    );
    expectError(
      await oauth('/oauth/device/code', { client_id: CLI_OAUTH_CLIENT_ID, scope: CONTRACTS_READ, connection_id: bound.connectionId }),
      400,
      'invalid_scope',
    );
    const device = await requestSetupCode(bound.connectionId, [CONTRACTS_READ]);
    expect((await consent(owner.sessionToken, device.user_code)).statusCode).toBe(200);
    expectError(await exchange(device.device_code, CLI_OAUTH_CLIENT_ID), 400, 'invalid_grant');
    const tokens = (await exchange(device.device_code)).json();
    const cli = await loginCli(baseUrl, owner.sessionToken, ['contracts:read']);
    const refresh = (token: string, clientId: string) =>
      oauth('/oauth/token', { grant_type: 'refresh_token', refresh_token: token, client_id: clientId });
    expectError(await refresh(cli.refreshToken, SETUP_OAUTH_CLIENT_ID), 400, 'invalid_grant');
    expectError(await refresh(tokens.refresh_token, CLI_OAUTH_CLIENT_ID), 400, 'invalid_grant');
    // A CLI token on the setup path is a CLI token still: without the route's CLI rule it is not a setup token.
    expectError(await callWithToken(cli.accessToken, 'GET', contractsUrl(bound.connectionId)), 400, 'workspace_required');
    // A setup grant is not a CLI session.
    const sessions = await callWithToken(cli.accessToken, 'GET', '/v1/cli/sessions');
    expect(sessions.statusCode, sessions.body).toBe(200);
    expect(sessions.json().items.map((item: { id: string }) => item.id)).toEqual([cli.clientId]);
  });
});

describe('a setup token on the management routes', () => {
  it('lists the contracts of its bound Integration only', async () => {
    const tokens = await setupLogin(bound.connectionId);
    const listed = await callWithToken(tokens.access_token, 'GET', contractsUrl(bound.connectionId));
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().contracts.map((item: { id: string }) => item.id)).toEqual([contractVersionId]);
    const before = [await auditCount(), await contractState(ctx, other.connectionId)];
    for (const id of [other.connectionId, `int_${'y'.repeat(26)}`]) {
      expectError(await callWithToken(tokens.access_token, 'GET', contractsUrl(id)), 403, 'integration_scope_mismatch');
    }
    expect([await auditCount(), await contractState(ctx, other.connectionId)]).toEqual(before);
  });

  it('cannot register, activate or read anything else (403 insufficient_scope), nor any /v1/cli route (401)', async () => {
    const tokens = await setupLogin(bound.connectionId, [CONTRACTS_READ, INTEGRATIONS_DELETE]);
    const before = [await auditCount(), await contractState(ctx, bound.connectionId)];
    const register = await callWithToken(
      tokens.access_token,
      'POST',
      contractsUrl(bound.connectionId),
      openApiRegistration('2.0.0'),
      newIdempotencyKey(),
    );
    expectError(register, 403, 'insufficient_scope');
    const activate = await callWithToken(
      tokens.access_token,
      'POST',
      activateUrl(bound.connectionId, contractVersionId),
      { reason: 'setup tool activation attempt' },
      newIdempotencyKey(),
    );
    expectError(activate, 403, 'insufficient_scope');
    for (const url of [contractUrl(bound.connectionId, contractVersionId), '/v1/integrations', `/v1/connections/${bound.connectionId}`]) {
      expectError(await callWithToken(tokens.access_token, 'GET', url), 403, 'insufficient_scope');
    }
    for (const url of ['/v1/cli/me', '/v1/cli/workspaces']) {
      expectError(await callWithToken(tokens.access_token, 'GET', url), 401, 'unauthenticated');
    }
    expect([await auditCount(), await contractState(ctx, bound.connectionId)]).toEqual(before);
  });

  it('needs the contracts scope to list, and loses access when the approver leaves the workspace', async () => {
    const deleteOnly = await setupLogin(bound.connectionId, [INTEGRATIONS_DELETE]);
    expectError(await callWithToken(deleteOnly.access_token, 'GET', contractsUrl(bound.connectionId)), 403, 'insufficient_scope');
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, admin.userId, 'admin');
    const device = await requestSetupCode(bound.connectionId, [CONTRACTS_READ]);
    expect((await consent(admin.sessionToken, device.user_code)).statusCode).toBe(200);
    const tokens = (await exchange(device.device_code)).json();
    expect((await callWithToken(tokens.access_token, 'GET', contractsUrl(bound.connectionId))).statusCode).toBe(200);
    await ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
      owner.workspace.id,
      admin.userId,
    ]);
    expectError(await callWithToken(tokens.access_token, 'GET', contractsUrl(bound.connectionId)), 401, 'unauthenticated');
  });

  it('refreshes and revokes as a CLI grant does, with its own client id', async () => {
    const tokens = await setupLogin(bound.connectionId);
    const refresh = (token: string) =>
      oauth('/oauth/token', { grant_type: 'refresh_token', refresh_token: token, client_id: SETUP_OAUTH_CLIENT_ID });
    const rotated = await refresh(tokens.refresh_token);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const next = rotated.json();
    expect(next.access_token).toMatch(/^svc_setup_at_/);
    expect((await callWithToken(next.access_token, 'GET', contractsUrl(bound.connectionId))).statusCode).toBe(200);
    // Reuse of the spent refresh token revokes the grant: its newest access token stops working.
    expectError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
    expectError(await callWithToken(next.access_token, 'GET', contractsUrl(bound.connectionId)), 401, 'unauthenticated');

    const fresh = await setupLogin(bound.connectionId);
    expect((await oauth('/oauth/revoke', { token: fresh.access_token, client_id: CLI_OAUTH_CLIENT_ID })).statusCode).toBe(200);
    expect((await callWithToken(fresh.access_token, 'GET', contractsUrl(bound.connectionId))).statusCode).toBe(200);
    expect((await oauth('/oauth/revoke', { token: fresh.access_token, client_id: SETUP_OAUTH_CLIENT_ID })).statusCode).toBe(200);
    expectError(await callWithToken(fresh.access_token, 'GET', contractsUrl(bound.connectionId)), 401, 'unauthenticated');
  });
});

describe('a setup token on the reviewed deletion routes', () => {
  const preview = (token: string, path: string) => callWithToken(token, 'POST', `${path}/deletion-preview`, {});
  const reviews = () => countRows(ctx, 'deletion_reviews', 'workspace_id = $1', [owner.workspace.id]);

  it('previews and confirms the deletion of its bound Integration, and no other (403 integration_scope_mismatch)', async () => {
    const shipments = (await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Shipments' })).integration;
    const readOnly = await setupLogin(shipments.connectionId, [CONTRACTS_READ]);
    const tokens = await setupLogin(shipments.connectionId, [INTEGRATIONS_DELETE]);
    const integrationPath = `/v1/integrations/${shipments.id}`;

    const before = [await auditCount(), await reviews()];
    expectError(await preview(readOnly.access_token, integrationPath), 403, 'insufficient_scope');
    expectError(await preview(tokens.access_token, `/v1/integrations/${other.id}`), 403, 'integration_scope_mismatch');
    expectError(
      await preview(tokens.access_token, `${integrationPath}/connections/${other.connectionId}`),
      403,
      'integration_scope_mismatch',
    );
    const confirmOther = await callWithToken(
      tokens.access_token,
      'POST',
      `/v1/integrations/${other.id}/deletion`,
      { operationId: `del_${'z'.repeat(26)}`, confirmName: 'Refunds', fingerprint: `sha256:${'0'.repeat(64)}` },
      newIdempotencyKey(),
    );
    expectError(confirmOther, 403, 'integration_scope_mismatch');
    expect([await auditCount(), await reviews()]).toEqual(before);

    const review = await preview(tokens.access_token, integrationPath);
    expect(review.statusCode, review.body).toBe(201);
    const { operationId, fingerprint } = review.json();
    const status = await callWithToken(tokens.access_token, 'GET', `/v1/deletion-operations/${operationId}`);
    expect(status.statusCode, status.body).toBe(200);
    // The review belongs to the setup grant that made it: the workspace's API key does not find it.
    expectError(await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/deletion-operations/${operationId}`), 404, 'not_found');
    const confirmKey = newIdempotencyKey();
    const confirmed = await callWithToken(
      tokens.access_token,
      'POST',
      `${integrationPath}/deletion`,
      { operationId, confirmName: 'Shipments', fingerprint },
      confirmKey,
    );
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    expect(confirmed.json()).toMatchObject({
      action: 'integration.delete',
      integrationDeleted: true,
      workspaceIntegrationId: shipments.id,
    });
    expect(await countRows(ctx, 'integrations', 'id = $1 AND deleted_at IS NOT NULL', [shipments.id])).toBe(1);
    expect(await countRows(ctx, 'integrations', 'id = $1 AND deleted_at IS NULL', [other.id])).toBe(1);
    // The grant outlives what it deleted: the identical retry replays, the receipt stays readable,
    // and its bound Integration's contracts are simply not found.
    const replay = await callWithToken(
      tokens.access_token,
      'POST',
      `${integrationPath}/deletion`,
      { operationId, confirmName: 'Shipments', fingerprint },
      confirmKey,
    );
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json()).toMatchObject({ operationId, replayed: true });
    expect((await callWithToken(tokens.access_token, 'GET', `/v1/deletion-operations/${operationId}`)).statusCode).toBe(200);
    expectError(await callWithToken(readOnly.access_token, 'GET', contractsUrl(shipments.connectionId)), 404, 'integration_not_found');
  });
});
