import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { WORKSPACE_HEADER } from '../management/auth/cliApi.js';
import { callCli, cliWriteState, loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import { bootstrapWorkspace, callWithKey, createTestContext, expectError, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { insertConnections, readConnectionRow } from './helpers/connections.js';
import { activateOk, activateUrl, contractsUrl, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createIntegration } from './helpers/integrations.js';
import { createRuleWithKey } from './helpers/rules.js';

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
afterEach(() => {
  ctx.hooks.beforeAuthorityRecheck = undefined;
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

const rulesUrl = (connectionId: string) => `/v1/connections/${connectionId}/reconciliation-rules`;
const ruleDefinition = (n: number) => ({ sourceEventType: `order.paid.${n}`, expectedObjectType: 'shipment', maxDelayMs: 60_000 });

/** A fresh workspace with one Sandbox Integration, and a CLI session of its owner with every scope. */
async function freshWorkspace(): Promise<{ boot: BootstrapResult; connectionId: string; integrationId: string; cli: CliSession }> {
  const boot = await bootstrapWorkspace(ctx);
  const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
  return {
    boot,
    connectionId: created.integration.connectionId,
    integrationId: created.integration.id,
    cli: await loginCli(baseUrl, boot.sessionToken),
  };
}

/** Everything a rule mutation writes in a workspace. */
async function ruleWrites(workspaceId: string, connectionId: string): Promise<unknown> {
  const { rows } = await ctx.deps.pool.query(
    `SELECT (SELECT count(*) FROM reconciliation_rules WHERE connection_id = $2) AS rules,
            (SELECT count(*) FROM operations WHERE workspace_id = $1) AS operations,
            (SELECT count(*) FROM audit_events WHERE workspace_id = $1) AS audit,
            (SELECT revision FROM connections WHERE id = $2) AS revision`,
    [workspaceId, connectionId],
  );
  return rows[0];
}

async function newestAudit(workspaceId: string, action: string) {
  const { rows } = await ctx.deps.pool.query<{ actor_type: string; actor_id: string; metadata: Record<string, unknown> }>(
    'SELECT actor_type, actor_id, metadata FROM audit_events WHERE workspace_id = $1 AND action = $2 ORDER BY id DESC LIMIT 1',
    [workspaceId, action],
  );
  return rows[0];
}

describe('writes through a CLI token', () => {
  it('creates a rule with the exact scope, replays it for the same client and audits the user with the client id', async () => {
    const w = await freshWorkspace();
    const idempotencyKey = newIdempotencyKey();
    const { revision } = await readConnectionRow(ctx, w.connectionId);
    const body = { expectedRevision: revision, ...ruleDefinition(1) };
    const send = (token: string) =>
      callCliRoute(token, 'POST', rulesUrl(w.connectionId), { workspace: w.boot.workspace.slug, body, idempotencyKey });
    const first = await send(w.cli.accessToken);
    expect(first.statusCode, first.body).toBe(201);
    const receipt = first.json();
    const again = await send(w.cli.accessToken);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ operationId: receipt.operationId, replayed: true });

    // The row is the workspace's, like an API key's (newestAudit reads by workspace).
    const row = await newestAudit(w.boot.workspace.id, 'rule.create');
    expect(row).toMatchObject({ actor_type: 'user', actor_id: w.boot.user.id });
    expect(row.metadata).toMatchObject({ operationId: receipt.operationId, actorClientId: w.cli.clientId });
    const { rows } = await ctx.deps.pool.query('SELECT api_key_id, user_id, cli_client_id FROM operations WHERE id = $1', [
      receipt.operationId,
    ]);
    expect(rows).toEqual([{ api_key_id: null, user_id: w.boot.user.id, cli_client_id: w.cli.clientId }]);
  });

  it('keeps a receipt to the client that made it: another client of the same user and an API key get 404, a replay 409', async () => {
    const w = await freshWorkspace();
    const other = await loginCli(baseUrl, w.boot.sessionToken);
    const idempotencyKey = newIdempotencyKey();
    const { revision } = await readConnectionRow(ctx, w.connectionId);
    const body = { expectedRevision: revision, ...ruleDefinition(2) };
    const made = await callCliRoute(w.cli.accessToken, 'POST', rulesUrl(w.connectionId), {
      workspace: w.boot.workspace.slug,
      body,
      idempotencyKey,
    });
    expect(made.statusCode, made.body).toBe(201);
    const operationUrl = `/v1/rule-operations/${made.json().operationId}`;

    const own = await callCliRoute(w.cli.accessToken, 'GET', operationUrl, { workspace: w.boot.workspace.slug });
    expect(own.statusCode, own.body).toBe(200);
    expectError(
      await callCliRoute(other.accessToken, 'GET', operationUrl, { workspace: w.boot.workspace.slug }),
      404,
      'operation_not_found',
    );
    expectError(await callWithKey(ctx, w.boot.apiKey.key, 'GET', operationUrl), 404, 'operation_not_found');

    const before = await ruleWrites(w.boot.workspace.id, w.connectionId);
    const replayByOther = await callCliRoute(other.accessToken, 'POST', rulesUrl(w.connectionId), {
      workspace: w.boot.workspace.slug,
      body,
      idempotencyKey,
    });
    expectError(replayByOther, 409, 'idempotency_conflict');
    expectError(
      await callWithKey(ctx, w.boot.apiKey.key, 'POST', rulesUrl(w.connectionId), { body, idempotencyKey }),
      409,
      'idempotency_conflict',
    );
    expect(await ruleWrites(w.boot.workspace.id, w.connectionId)).toEqual(before);
  });

  it('refuses a write without the exact scope (403), without the header (400), in a foreign workspace (404) and by a viewer (403)', async () => {
    const w = await freshWorkspace();
    const { revision } = await readConnectionRow(ctx, w.connectionId);
    const body = { expectedRevision: revision, ...ruleDefinition(3) };
    const readOnly = await loginCli(baseUrl, w.boot.sessionToken, ['integrations:read']);
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, w.boot.workspace.id, viewer.userId, 'viewer');
    const viewerCli = await loginCli(baseUrl, viewer.sessionToken);
    const foreign = await bootstrapWorkspace(ctx);
    const cases: [string, string, string | undefined, number, string][] = [
      ['no integrations:manage', readOnly.accessToken, w.boot.workspace.slug, 403, 'insufficient_scope'],
      ['no header', w.cli.accessToken, undefined, 400, 'workspace_required'],
      ['foreign workspace', w.cli.accessToken, foreign.workspace.slug, 404, 'workspace_not_found'],
      ['viewer', viewerCli.accessToken, w.boot.workspace.slug, 403, 'cli_operation_forbidden'],
    ];
    for (const [label, token, workspace, status, code] of cases) {
      const before = await ruleWrites(w.boot.workspace.id, w.connectionId);
      const res = await callCliRoute(token, 'POST', rulesUrl(w.connectionId), { workspace, body, idempotencyKey: newIdempotencyKey() });
      expect(res.statusCode, `${label} ${res.body}`).toBe(status);
      expect(res.json(), label).toEqual({ error: code });
      expect(await ruleWrites(w.boot.workspace.id, w.connectionId), label).toEqual(before);
    }
  });

  const losses: [string, (w: { boot: BootstrapResult; cli: CliSession }) => Promise<unknown>, number, string][] = [
    [
      'the CLI client is revoked',
      (w) => ctx.deps.pool.query('UPDATE cli_clients SET revoked_at = now() WHERE id = $1', [w.cli.clientId]),
      403,
      'insufficient_scope',
    ],
    [
      'the user is removed from the workspace',
      (w) =>
        ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
          w.boot.workspace.id,
          w.boot.user.id,
        ]),
      403,
      'insufficient_scope',
    ],
    [
      'the user becomes a viewer',
      (w) =>
        ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
          w.boot.workspace.id,
          w.boot.user.id,
        ]),
      403,
      'insufficient_scope',
    ],
    [
      'the workspace is archived',
      (w) => ctx.deps.pool.query("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1", [w.boot.workspace.id]),
      409,
      'workspace_unavailable',
    ],
  ];
  for (const [label, lose, status, code] of losses) {
    it(`rolls back a CLI write when ${label} between authentication and commit (${status} ${code})`, async () => {
      const w = await freshWorkspace();
      const { revision } = await readConnectionRow(ctx, w.connectionId);
      const before = await ruleWrites(w.boot.workspace.id, w.connectionId);
      const kinds: string[] = [];
      ctx.hooks.beforeAuthorityRecheck = async (kind) => {
        kinds.push(kind);
        await lose(w);
      };
      const res = await callCliRoute(w.cli.accessToken, 'POST', rulesUrl(w.connectionId), {
        workspace: w.boot.workspace.slug,
        body: { expectedRevision: revision, ...ruleDefinition(4) },
        idempotencyKey: newIdempotencyKey(),
      });
      expect(kinds).toEqual(['rule.create']);
      expectError(res, status, code);
      expect(await ruleWrites(w.boot.workspace.id, w.connectionId)).toEqual(before);
    });
  }

  it('registers and activates a contract with contracts:write and contracts:activate, each audited with the client id', async () => {
    const w = await freshWorkspace();
    const writer = await loginCli(baseUrl, w.boot.sessionToken, ['contracts:read', 'contracts:write']);
    const registered = await callCliRoute(writer.accessToken, 'POST', contractsUrl(w.connectionId), {
      workspace: w.boot.workspace.slug,
      body: openApiRegistration('1.0.0'),
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const versionId = registered.json().contract.id;
    expect(await newestAudit(w.boot.workspace.id, 'contract.register')).toMatchObject({
      actor_type: 'user',
      actor_id: w.boot.user.id,
      metadata: { actorClientId: writer.clientId },
    });
    const activation = { expectedActiveContractVersionId: null, reason: 'promote' };
    expectError(
      await callCliRoute(writer.accessToken, 'POST', activateUrl(w.connectionId, versionId), {
        workspace: w.boot.workspace.slug,
        body: activation,
      }),
      403,
      'insufficient_scope',
    );
    const activator = await loginCli(baseUrl, w.boot.sessionToken, ['contracts:activate']);
    const activated = await callCliRoute(activator.accessToken, 'POST', activateUrl(w.connectionId, versionId), {
      workspace: w.boot.workspace.slug,
      body: activation,
    });
    expect(activated.statusCode, activated.body).toBe(200);
    expect(activated.json()).toMatchObject({ activeContractVersionId: versionId });
    expect(await newestAudit(w.boot.workspace.id, 'contract.activate')).toMatchObject({
      actor_type: 'user',
      actor_id: w.boot.user.id,
      metadata: { actorClientId: activator.clientId },
    });
  });

  it('previews, applies and compensates a configuration copy; apply and reads belong to the client that previewed', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    const version = await registerDraft(ctx, boot.apiKey.key, sandbox.connectionId, openApiRegistration('2024-01'));
    await activateOk(ctx, boot.apiKey.key, sandbox.connectionId, version.contract.id, {
      expectedActiveContractVersionId: null,
      reason: 'promote',
    });
    const rule = await createRuleWithKey(ctx, boot.apiKey.key, sandbox.connectionId, ruleDefinition(5));
    const mine = await loginCli(baseUrl, boot.sessionToken, ['integrations:manage']);
    const other = await loginCli(baseUrl, boot.sessionToken, ['integrations:manage']);
    const workspace = boot.workspace.slug;
    const selection = { sourceConnectionId: sandbox.connectionId, contractVersionIds: [version.contract.id], ruleIds: [rule.rule.id] };

    const previewed = await callCliRoute(mine.accessToken, 'POST', `/v1/connections/${live.connectionId}/configuration-copy/preview`, {
      workspace,
      body: selection,
    });
    expect(previewed.statusCode, previewed.body).toBe(201);
    const review = previewed.json();
    const operationUrl = `/v1/configuration-operations/${review.operationId}`;
    expectError(await callCliRoute(other.accessToken, 'GET', operationUrl, { workspace }), 404, 'operation_not_found');
    expectError(await callWithKey(ctx, boot.apiKey.key, 'GET', operationUrl), 404, 'operation_not_found');
    const approval = { approvalFingerprint: review.fingerprint };
    expectError(
      await callCliRoute(other.accessToken, 'POST', `${operationUrl}/apply`, {
        workspace,
        body: approval,
        idempotencyKey: newIdempotencyKey(),
      }),
      404,
      'operation_not_found',
    );

    const idempotencyKey = newIdempotencyKey();
    const applied = await callCliRoute(mine.accessToken, 'POST', `${operationUrl}/apply`, { workspace, body: approval, idempotencyKey });
    expect(applied.statusCode, applied.body).toBe(201);
    const replayed = await callCliRoute(mine.accessToken, 'POST', `${operationUrl}/apply`, { workspace, body: approval, idempotencyKey });
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json()).toMatchObject({ operationId: review.operationId, replayed: true });
    const read = await callCliRoute(mine.accessToken, 'GET', operationUrl, { workspace });
    expect(read.statusCode, read.body).toBe(200);
    expect(await newestAudit(boot.workspace.id, 'configuration.copy')).toMatchObject({
      actor_type: 'user',
      actor_id: boot.user.id,
      metadata: { actorClientId: mine.clientId },
    });

    expectError(
      await callCliRoute(other.accessToken, 'POST', `${operationUrl}/compensation-preview`, { workspace, body: {} }),
      404,
      'operation_not_found',
    );
    const compensation = await callCliRoute(mine.accessToken, 'POST', `${operationUrl}/compensation-preview`, { workspace, body: {} });
    expect(compensation.statusCode, compensation.body).toBe(201);
  });

  it('previews, reads and confirms a reviewed Integration deletion; the review belongs to the client that made it', async () => {
    const w = await freshWorkspace();
    const other = await loginCli(baseUrl, w.boot.sessionToken);
    const path = `/v1/integrations/${w.integrationId}`;
    const previewed = await callCliRoute(w.cli.accessToken, 'POST', `${path}/deletion-preview`, {
      workspace: w.boot.workspace.slug,
      body: {},
    });
    expect(previewed.statusCode, previewed.body).toBe(201);
    const review = previewed.json();
    // The deletion receipt read answers another actor's operation 404 `not_found`, as for another key.
    const statusUrl = `/v1/deletion-operations/${review.operationId}`;
    const own = await callCliRoute(w.cli.accessToken, 'GET', statusUrl, { workspace: w.boot.workspace.slug });
    expect(own.statusCode, own.body).toBe(200);
    expectError(await callCliRoute(other.accessToken, 'GET', statusUrl, { workspace: w.boot.workspace.slug }), 404, 'not_found');
    expectError(await callWithKey(ctx, w.boot.apiKey.key, 'GET', statusUrl), 404, 'not_found');

    const confirmation = {
      operationId: review.operationId,
      confirmName: review.snapshot.integration.name,
      fingerprint: review.fingerprint,
    };
    const byOther = await callCliRoute(other.accessToken, 'POST', `${path}/deletion`, {
      workspace: w.boot.workspace.slug,
      body: confirmation,
      idempotencyKey: newIdempotencyKey(),
    });
    expect(byOther.statusCode, byOther.body).toBe(404);
    const done = await callCliRoute(w.cli.accessToken, 'POST', `${path}/deletion`, {
      workspace: w.boot.workspace.slug,
      body: confirmation,
      idempotencyKey: newIdempotencyKey(),
    });
    expect(done.statusCode, done.body).toBe(201);
    expect(await newestAudit(w.boot.workspace.id, 'integration.delete')).toMatchObject({
      actor_type: 'user',
      actor_id: w.boot.user.id,
      metadata: { actorClientId: w.cli.clientId },
    });
  });
});

describe('the API reference', () => {
  it('documents both schemes on a route that takes a CLI token, and the refusal on one that does not', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const incidents = document.paths['/v1/incidents'].get;
    expect(incidents.security).toEqual([{ apiKey: [] }, { cli: [] }]);
    expect(incidents['x-scopes']).toEqual(['incidents:read']);
    expect(incidents['x-cli-scopes']).toEqual(['service:cli:incidents:read']);
    expect(incidents['x-error-codes']).toEqual(expect.arrayContaining(['workspace_required', 'workspace_not_found']));
    const rule = document.paths['/v1/connections/{connectionId}/reconciliation-rules'].post;
    expect(rule['x-error-codes']).toContain('cli_operation_forbidden');
    const creation = document.paths['/v1/integrations'].post;
    expect(creation.security).toEqual([{ apiKey: [] }]);
    expect(creation['x-error-codes']).toContain('cli_operation_forbidden');
  });
});
