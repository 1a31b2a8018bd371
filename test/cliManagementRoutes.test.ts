import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { WORKSPACE_HEADER } from '../management/auth/cliApi.js';
import { callCli, cliWriteState, loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import { bootstrapWorkspace, callWithKey, createTestContext, expectError, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { contractsUrl } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';

// 03 Reviewed repairs 5 and Authentication / Account CLI OAuth 3 and 6: the other management
// routes accept a CLI access token with `service:cli:` + the route's own scope and the workspace
// header, or refuse it (credential, Integration creation and mode-connection setup routes), and
// API keys keep working as before.

let ctx: TestContext;
let baseUrl: string;
let owner: BootstrapResult;
let integration: { id: string; connectionId: string };
let cli: CliSession;

beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
  owner = await bootstrapWorkspace(ctx);
  const created = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
  integration = { id: created.integration.id, connectionId: created.integration.connectionId };
  cli = await loginCli(baseUrl, owner.sessionToken);
});
afterAll(async () => {
  await ctx.close();
});

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Calls a `/v1` route with a CLI access token, the workspace header when given, a body and an Idempotency-Key. */
function callCliRoute(
  token: string,
  method: Method,
  url: string,
  options: { workspace?: string; body?: unknown; idempotencyKey?: string } = {},
) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.workspace !== undefined) headers[WORKSPACE_HEADER] = options.workspace;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return ctx.app.inject({ method, url, headers, ...(options.body === undefined ? {} : { payload: options.body as object }) });
}

/** A representative read of each family, with the API key scope it needs. */
function reads(): [string, string, 'integrations:read' | 'contracts:read' | 'observations:read' | 'incidents:read'][] {
  const { id, connectionId } = integration;
  return [
    ['inventory', '/v1/integrations', 'integrations:read'],
    ['integration detail', `/v1/integrations/${id}`, 'integrations:read'],
    ['connection metadata', `/v1/connections/${connectionId}`, 'integrations:read'],
    ['modes', '/v1/environments', 'integrations:read'],
    ['connection coverage', `/v1/connections/${connectionId}/coverage`, 'observations:read'],
    ['reconciliation rules', `/v1/connections/${connectionId}/reconciliation-rules`, 'integrations:read'],
    ['contracts', contractsUrl(connectionId), 'contracts:read'],
    ['observations', `/v1/observations?integrationId=${connectionId}`, 'observations:read'],
    ['incidents', `/v1/incidents?integrationId=${connectionId}&mode=sandbox`, 'incidents:read'],
    ['usage', '/v1/usage', 'observations:read'],
  ];
}

/** A read body without the default window, which coverage computes from the current time. */
function withoutWindow(body: Record<string, unknown>): Record<string, unknown> {
  const { from: _from, to: _to, ...rest } = body;
  return rest;
}

describe('reads through a CLI token', () => {
  it('answers each family as it answers the workspace API key', async () => {
    for (const [family, url] of reads()) {
      const keyed = await callWithKey(ctx, owner.apiKey.key, 'GET', url);
      expect(keyed.statusCode, `${family} ${keyed.body}`).toBe(200);
      const res = await callCliRoute(cli.accessToken, 'GET', url, { workspace: owner.workspace.slug });
      expect(res.statusCode, `${family} ${res.body}`).toBe(200);
      expect(withoutWindow(res.json()), family).toEqual(withoutWindow(keyed.json()));
    }
  });

  it('needs the exact scope of the route: 403 insufficient_scope without it', async () => {
    const other = await loginCli(baseUrl, owner.sessionToken, ['repairs:read']);
    for (const [family, url, scope] of reads()) {
      const narrow = await loginCli(baseUrl, owner.sessionToken, ['repairs:read', scope]);
      const ok = await callCliRoute(narrow.accessToken, 'GET', url, { workspace: owner.workspace.slug });
      expect(ok.statusCode, `${family} ${ok.body}`).toBe(200);
      expectError(await callCliRoute(other.accessToken, 'GET', url, { workspace: owner.workspace.slug }), 403, 'insufficient_scope');
    }
  });

  it('needs the workspace header (400 workspace_required) naming a workspace of the user (404 workspace_not_found)', async () => {
    const foreign = await bootstrapWorkspace(ctx);
    for (const [, url] of reads()) {
      expectError(await callCliRoute(cli.accessToken, 'GET', url), 400, 'workspace_required');
      expectError(await callCliRoute(cli.accessToken, 'GET', url, { workspace: '' }), 400, 'workspace_required');
      expectError(await callCliRoute(cli.accessToken, 'GET', url, { workspace: foreign.workspace.slug }), 404, 'workspace_not_found');
    }
  });

  it('lets a viewer read', async () => {
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    const viewerCli = await loginCli(baseUrl, viewer.sessionToken);
    for (const [family, url] of reads()) {
      const res = await callCliRoute(viewerCli.accessToken, 'GET', url, { workspace: owner.workspace.slug });
      expect(res.statusCode, `${family} ${res.body}`).toBe(200);
    }
  });

  it('reads observations only of the exact integrationId', async () => {
    expectError(
      await callCliRoute(cli.accessToken, 'GET', '/v1/observations', { workspace: owner.workspace.slug }),
      400,
      'connection_required',
    );
    const foreign = await bootstrapWorkspace(ctx);
    const theirs = await createIntegration(ctx, foreign.apiKey.key, { mode: 'sandbox' });
    expectError(
      await callCliRoute(cli.accessToken, 'GET', `/v1/observations?integrationId=${theirs.integration.connectionId}`, {
        workspace: owner.workspace.slug,
      }),
      404,
      'connection_not_found',
    );
  });

  it('refuses a revoked CLI client at once (401 unauthenticated)', async () => {
    const revoked = await loginCli(baseUrl, owner.sessionToken, ['integrations:read']);
    await ctx.deps.pool.query('UPDATE cli_clients SET revoked_at = now() WHERE id = $1', [revoked.clientId]);
    expectError(
      await callCliRoute(revoked.accessToken, 'GET', '/v1/integrations', { workspace: owner.workspace.slug }),
      401,
      'unauthenticated',
    );
  });
});

describe('routes that refuse CLI tokens', () => {
  function denied(): [string, Method, string, unknown][] {
    const { connectionId } = integration;
    return [
      ['credential status', 'GET', `/v1/connections/${connectionId}/credentials`, undefined],
      ['credential issue', 'POST', `/v1/connections/${connectionId}/credentials/issue`, { expectedRevision: '1' }],
      ['credential rotate', 'POST', `/v1/connections/${connectionId}/credentials/rotate`, { expectedRevision: '1' }],
      ['credential revoke', 'POST', `/v1/connections/${connectionId}/credentials/revoke`, { expectedRevision: '1' }],
      ['credential verify', 'POST', `/v1/connections/${connectionId}/credentials/verify`, { connectionKey: 'x', ingestToken: 'y' }],
      ['credential operation', 'GET', '/v1/credential-operations/cop_unknown', undefined],
      ['Integration creation', 'POST', '/v1/integrations', { mode: 'sandbox', name: 'Refused', system: 'orders' }],
      ['mode-connection setup', 'POST', `/v1/integrations/${integration.id}/connections/preview`, { mode: 'live' }],
    ];
  }

  it('answers 403 cli_operation_forbidden and writes nothing, whatever the scope', async () => {
    for (const [family, method, url, body] of denied()) {
      const before = await cliWriteState(ctx, owner.user.id);
      const res = await callCliRoute(cli.accessToken, method, url, {
        workspace: owner.workspace.slug,
        body,
        idempotencyKey: newIdempotencyKey(),
      });
      expect(res.statusCode, `${family} ${res.body}`).toBe(403);
      expect(res.json(), family).toEqual({ error: 'cli_operation_forbidden' });
      expect(await cliWriteState(ctx, owner.user.id), family).toEqual(before);
    }
  });

  it('still answers 401 to an invalid CLI token there, and serves API keys', async () => {
    expectError(
      await callCli(ctx, 'svc_cli_at_not-a-token', 'GET', `/v1/connections/${integration.connectionId}/credentials`),
      401,
      'unauthenticated',
    );
    const keyed = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/connections/${integration.connectionId}/credentials`);
    expect(keyed.statusCode, keyed.body).toBe(200);
  });
});
