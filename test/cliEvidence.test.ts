import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { cliAuth } from '../management/auth/cliAuth.js';
import { registerErrorHandler } from '../management/plugins/errorHandler.js';
import { newId } from '../shared/ids.js';
import { callCli, cliWriteState, loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  createTestContext,
  expectError,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';
import { activateOk, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { insertFinding, insertIncident, type IncidentTarget } from './helpers/incidents.js';
import { createIntegration, insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';

// 03 Evidence reads of the CLI API: verification, incident list and detail of one exact
// connection of the workspace named by `X-Service-Workspace`, with the CLI hook's checks
// (header, current membership, scope) made on every request.

let ctx: TestContext;
let baseUrl: string;
beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
});
afterAll(async () => {
  await ctx.close();
});

async function createTarget(boot: BootstrapResult, mode: 'sandbox' | 'live' = 'sandbox'): Promise<IncidentTarget> {
  const created = await createIntegration(ctx, boot.apiKey.key, { mode });
  return {
    workspaceId: boot.workspace.id,
    integrationId: created.integration.id,
    connectionId: created.integration.connectionId,
    environmentId: created.integration.environmentId,
    mode,
  };
}

/** Asserts an error answer and that the request wrote nothing. */
async function expectRefused(userId: string, request: () => ReturnType<typeof callCli>, status: number, error: string): Promise<void> {
  const before = await cliWriteState(ctx, userId);
  expectError(await request(), status, error);
  expect(await cliWriteState(ctx, userId)).toEqual(before);
}

const verifyUrl = (connectionId: string) => `/v1/cli/connections/${connectionId}/verify`;
const listUrl = (connectionId: string, query = '') => `/v1/cli/connections/${connectionId}/incidents${query}`;
const detailUrl = (connectionId: string, incidentId: string) => `/v1/cli/connections/${connectionId}/incidents/${incidentId}`;
const ids = (body: { items: { id: string }[] }) => body.items.map((item) => item.id);

describe('the CLI hook on workspace routes', () => {
  let owner: BootstrapResult;
  let target: IncidentTarget;
  let incidentId: string;
  let cli: CliSession;
  let urls: string[];

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    target = await createTarget(owner);
    incidentId = await insertIncident(ctx, target, { createdAt: '2025-03-01T10:00:00.000Z' });
    cli = await loginCli(baseUrl, owner.sessionToken);
    urls = [verifyUrl(target.connectionId), listUrl(target.connectionId), detailUrl(target.connectionId, incidentId)];
  });

  it('serves the reads to an owner with the header', async () => {
    for (const url of urls) {
      const res = await callCli(ctx, cli.accessToken, 'GET', url, { workspace: owner.workspace.slug });
      expect(res.statusCode, `${url} ${res.body}`).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('needs X-Service-Workspace (400 workspace_required)', async () => {
    for (const url of urls) {
      await expectRefused(owner.user.id, () => callCli(ctx, cli.accessToken, 'GET', url), 400, 'workspace_required');
      await expectRefused(owner.user.id, () => callCli(ctx, cli.accessToken, 'GET', url, { workspace: '' }), 400, 'workspace_required');
    }
  });

  it('answers 404 workspace_not_found for an unknown, malformed, foreign or archived workspace', async () => {
    const stranger = await bootstrapWorkspace(ctx);
    const strangerTarget = await createTarget(stranger);
    const archivedOwner = await bootstrapWorkspace(ctx);
    await addWorkspaceMember(ctx, archivedOwner.workspace.id, owner.user.id, 'admin');
    const archivedTarget = await createTarget(archivedOwner);
    const archive = await callWithSession(ctx, archivedOwner.sessionToken, 'POST', `/workspaces/${archivedOwner.workspace.slug}/archive`);
    expect(archive.statusCode, archive.body).toBe(200);
    const cases: [string, string][] = [
      ['no-such-workspace-here', verifyUrl(target.connectionId)],
      ['Not A Slug!', verifyUrl(target.connectionId)],
      [owner.workspace.id, verifyUrl(target.connectionId)],
      // A foreign workspace is 404 with its own connection or with the caller's.
      [stranger.workspace.slug, verifyUrl(strangerTarget.connectionId)],
      [stranger.workspace.slug, listUrl(target.connectionId)],
      [archivedOwner.workspace.slug, verifyUrl(archivedTarget.connectionId)],
      [archivedOwner.workspace.slug, listUrl(archivedTarget.connectionId)],
    ];
    for (const [workspace, url] of cases) {
      await expectRefused(owner.user.id, () => callCli(ctx, cli.accessToken, 'GET', url, { workspace }), 404, 'workspace_not_found');
    }
    // Restored, the membership serves again.
    await callWithSession(ctx, archivedOwner.sessionToken, 'POST', `/workspaces/${archivedOwner.workspace.slug}/restore`);
    const restored = await callCli(ctx, cli.accessToken, 'GET', verifyUrl(archivedTarget.connectionId), {
      workspace: archivedOwner.workspace.slug,
    });
    expect(restored.statusCode, restored.body).toBe(200);
  });

  it('withdraws a removed membership at once, for the same access token', async () => {
    const member = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, member.userId, 'admin');
    const memberCli = await loginCli(baseUrl, member.sessionToken, ['observations:read', 'incidents:read']);
    const read = () => callCli(ctx, memberCli.accessToken, 'GET', verifyUrl(target.connectionId), { workspace: owner.workspace.slug });
    expect((await read()).statusCode).toBe(200);
    await ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [
      owner.workspace.id,
      member.userId,
    ]);
    await expectRefused(member.userId, read, 404, 'workspace_not_found');
    for (const url of urls.slice(1)) {
      await expectRefused(
        member.userId,
        () => callCli(ctx, memberCli.accessToken, 'GET', url, { workspace: owner.workspace.slug }),
        404,
        'workspace_not_found',
      );
    }
    // The token itself is still valid: the account routes answer.
    expect((await callCli(ctx, memberCli.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);
  });

  it('answers an empty connection segment with 400 connection_required on every evidence read', async () => {
    for (const url of ['/v1/cli/connections//verify', '/v1/cli/connections//incidents', `/v1/cli/connections//incidents/${incidentId}`]) {
      await expectRefused(
        owner.user.id,
        () => callCli(ctx, cli.accessToken, 'GET', url, { workspace: owner.workspace.slug }),
        400,
        'connection_required',
      );
    }
  });

  it('lets a viewer read', async () => {
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    const viewerCli = await loginCli(baseUrl, viewer.sessionToken, ['observations:read', 'incidents:read']);
    for (const url of urls) {
      const res = await callCli(ctx, viewerCli.accessToken, 'GET', url, { workspace: owner.workspace.slug });
      expect(res.statusCode, `${url} ${res.body}`).toBe(200);
    }
  });

  it("needs the route's exact scope (403 insufficient_scope), checked before the workspace header", async () => {
    const observer = await loginCli(baseUrl, owner.sessionToken, ['observations:read']);
    const incidentReader = await loginCli(baseUrl, owner.sessionToken, ['incidents:read', 'repairs:read']);
    const cases: [CliSession, string][] = [
      [observer, listUrl(target.connectionId)],
      [observer, detailUrl(target.connectionId, incidentId)],
      [incidentReader, verifyUrl(target.connectionId)],
    ];
    for (const [session, url] of cases) {
      for (const workspace of [owner.workspace.slug, undefined, 'no-such-workspace-here']) {
        await expectRefused(
          owner.user.id,
          () => callCli(ctx, session.accessToken, 'GET', url, workspace === undefined ? {} : { workspace }),
          403,
          'insufficient_scope',
        );
      }
    }
    expect((await callCli(ctx, observer.accessToken, 'GET', urls[0], { workspace: owner.workspace.slug })).statusCode).toBe(200);
  });

  it('refuses API keys, ingest tokens and session cookies with 401 unauthenticated, before the header', async () => {
    const created = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
    for (const url of urls) {
      for (const bearer of [owner.apiKey.key, created.collectorConfiguration.ingestToken, owner.sessionToken, cli.refreshToken]) {
        for (const workspace of [owner.workspace.slug, undefined]) {
          await expectRefused(
            owner.user.id,
            () => callCli(ctx, bearer, 'GET', url, workspace === undefined ? {} : { workspace }),
            401,
            'unauthenticated',
          );
        }
      }
      await expectRefused(
        owner.user.id,
        () => callCli(ctx, null, 'GET', url, { workspace: owner.workspace.slug, headers: { cookie: `session=${owner.sessionToken}` } }),
        401,
        'unauthenticated',
      );
    }
  });

  it('lets viewers read only: a workspace write by a viewer is 403 cli_operation_forbidden (for the write routes to come)', async () => {
    // No route of this issue writes in a workspace; the hook is exercised on a write route of its own.
    const probe = Fastify();
    probe.decorate('deps', ctx.app.deps);
    registerErrorHandler(probe);
    probe.post('/probe', { onRequest: [cliAuth({ scope: 'repairs:create', workspace: true })] }, async () => ({ written: true }));
    probe.get('/probe', { onRequest: [cliAuth({ scope: 'repairs:read', workspace: true })] }, async () => ({ read: true }));
    await probe.ready();
    try {
      const viewer = await createConsoleUser(ctx);
      await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
      const viewerCli = await loginCli(baseUrl, viewer.sessionToken, ['repairs:create', 'repairs:read']);
      const call = (token: string, method: 'GET' | 'POST') =>
        probe.inject({ method, url: '/probe', headers: { authorization: `Bearer ${token}`, 'x-service-workspace': owner.workspace.slug } });
      expectError(await call(viewerCli.accessToken, 'POST'), 403, 'cli_operation_forbidden');
      expect((await call(viewerCli.accessToken, 'GET')).json()).toEqual({ read: true });
      expect((await call(cli.accessToken, 'POST')).json()).toEqual({ written: true });
      const readOnly = await loginCli(baseUrl, owner.sessionToken, ['repairs:read']);
      expectError(await call(readOnly.accessToken, 'POST'), 403, 'insufficient_scope');
    } finally {
      await probe.close();
    }
  });
});

describe('GET /v1/cli/connections/{connectionId}/verify', () => {
  let owner: BootstrapResult;
  let cli: CliSession;

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    cli = await loginCli(baseUrl, owner.sessionToken, ['observations:read']);
  });

  const verify = (connectionId: string, query = '') =>
    callCli(ctx, cli.accessToken, 'GET', `${verifyUrl(connectionId)}${query}`, { workspace: owner.workspace.slug });

  it('describes a new connection from stored evidence: active credential, no contract, no observations', async () => {
    const target = await createTarget(owner);
    const res = await verify(target.connectionId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      schemaVersion: 1,
      connectionId: target.connectionId,
      mode: 'sandbox',
      credentialStatus: 'active',
      activeContractVersionId: null,
      hasObservations: false,
      latestObservedAt: null,
    });
  });

  it('shows the active contract version and the latest observation the analyzer recorded', async () => {
    const target = await createTarget(owner);
    const draft = await registerDraft(ctx, owner.apiKey.key, target.connectionId, openApiRegistration('v1'));
    await activateOk(ctx, owner.apiKey.key, target.connectionId, draft.contract.id, {
      expectedActiveContractVersionId: null,
      reason: 'promote',
    });
    await ctx.deps.pool.query(`UPDATE connections SET latest_observation_at = '2025-03-04T05:06:07.089Z' WHERE id = $1`, [
      target.connectionId,
    ]);
    expect((await verify(target.connectionId)).json()).toMatchObject({
      activeContractVersionId: draft.contract.id,
      hasObservations: true,
      latestObservedAt: '2025-03-04T05:06:07.089Z',
    });
  });

  it('reports a revoked credential as revoked and a never-issued one as missing, in the mode of the connection', async () => {
    const target = await createTarget(owner);
    const connection = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/connections/${target.connectionId}`);
    const revoke = await callWithKey(ctx, owner.apiKey.key, 'POST', `/v1/connections/${target.connectionId}/credentials/revoke`, {
      idempotencyKey: newIdempotencyKey(),
      body: { expectedRevision: connection.json().revision },
    });
    expect(revoke.statusCode, revoke.body).toBeLessThan(300);
    expect((await verify(target.connectionId)).json()).toMatchObject({ credentialStatus: 'revoked', mode: 'sandbox' });
    const live = await insertSlotConnection(ctx, {
      workspaceId: owner.workspace.id,
      integrationId: target.integrationId,
      category: 'live',
    });
    expect((await verify(live.connectionId)).json()).toEqual({
      schemaVersion: 1,
      connectionId: live.connectionId,
      mode: 'live',
      credentialStatus: 'missing',
      activeContractVersionId: null,
      hasObservations: false,
      latestObservedAt: null,
    });
  });

  it('serves a legacy workspace connection in its classified mode', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const legacyCli = await loginCli(baseUrl, legacy.sessionToken, ['observations:read', 'incidents:read']);
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id, 'Legacy feed');
    const production = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'production' });
    const res = await callCli(ctx, legacyCli.accessToken, 'GET', verifyUrl(production.connectionId), { workspace: legacy.workspace.slug });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ connectionId: production.connectionId, mode: 'live', credentialStatus: 'missing' });
    const incident = await insertIncident(
      ctx,
      {
        workspaceId: legacy.workspace.id,
        integrationId,
        connectionId: production.connectionId,
        environmentId: production.environmentId,
        mode: 'live',
      },
      { createdAt: '2025-03-01T10:00:00.000Z' },
    );
    const list = await callCli(ctx, legacyCli.accessToken, 'GET', listUrl(production.connectionId), { workspace: legacy.workspace.slug });
    expect(list.json()).toMatchObject({ schemaVersion: 1, mode: 'live', items: [expect.objectContaining({ id: incident, mode: 'live' })] });
  });

  it('accepts no query parameter (400 invalid_evidence_query)', async () => {
    const target = await createTarget(owner);
    for (const query of ['?x=1', '?mode=sandbox', `?integrationId=${target.connectionId}`, '?=']) {
      await expectRefused(owner.user.id, () => verify(target.connectionId, query), 400, 'invalid_evidence_query');
    }
  });

  it('answers 404 connection_not_found for anything but a live int_ connection of the workspace', async () => {
    const target = await createTarget(owner);
    const stranger = await bootstrapWorkspace(ctx);
    const strangerTarget = await createTarget(stranger);
    const deleted = await createTarget(owner);
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [deleted.connectionId]);
    for (const id of [
      target.integrationId,
      strangerTarget.connectionId,
      deleted.connectionId,
      'int_00000000000000000000000000',
      target.connectionId.toUpperCase(),
      `${target.connectionId}x`,
      'x',
      'x'.repeat(300),
    ]) {
      await expectRefused(owner.user.id, () => verify(id), 404, 'connection_not_found');
    }
  });
});

describe('GET /v1/cli/connections/{connectionId}/incidents', () => {
  let owner: BootstrapResult;
  let cli: CliSession;
  let target: IncidentTarget;
  let ordered: string[];
  let openIds: Set<string>;

  const list = (connectionId: string, query = '', workspace = owner.workspace.slug, token = cli.accessToken) =>
    callCli(ctx, token, 'GET', listUrl(connectionId, query), { workspace });

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    cli = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    target = await createTarget(owner);
    const [tieLow, tieHigh] = [newId('inc_'), newId('inc_')];
    const a = await insertIncident(ctx, target, { createdAt: '2025-03-01T10:00:05.000Z' });
    const b = await insertIncident(ctx, target, { createdAt: '2025-03-01T10:00:04.000Z', status: 'resolved' });
    const c = await insertIncident(ctx, target, { createdAt: '2025-03-01T10:00:03.000200Z' });
    const d = await insertIncident(ctx, target, { createdAt: '2025-03-01T10:00:03.000100Z', status: 'resolved' });
    await insertIncident(ctx, target, { id: tieLow, createdAt: '2025-03-01T10:00:02.000Z' });
    await insertIncident(ctx, target, { id: tieHigh, createdAt: '2025-03-01T10:00:02.000Z', status: 'resolved' });
    const g = await insertIncident(ctx, target, { createdAt: '2025-03-01T10:00:01.000Z' });
    ordered = [a, b, c, d, tieHigh, tieLow, g];
    openIds = new Set([a, c, tieLow, g]);
    // Neighbours that must never appear: another connection of the workspace, and the Live slot's.
    const other = await createTarget(owner);
    await insertIncident(ctx, other, { createdAt: '2025-03-01T10:00:06.000Z' });
    const live = await insertSlotConnection(ctx, {
      workspaceId: owner.workspace.id,
      integrationId: target.integrationId,
      category: 'live',
    });
    await insertIncident(
      ctx,
      { ...target, connectionId: live.connectionId, environmentId: live.environmentId, mode: 'live' },
      { createdAt: '2025-03-01T10:00:07.000Z' },
    );
  });

  it("lists the connection's incidents newest first in its mode, over pages", async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await list(target.connectionId, `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['items', 'mode', 'nextCursor', 'schemaVersion']);
      expect(body).toMatchObject({ schemaVersion: 1, mode: 'sandbox' });
      seen.push(...ids(body));
      sizes.push(body.items.length);
      cursor = body.nextCursor;
      if (cursor === null) break;
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(ordered);
    const all = (await list(target.connectionId)).json();
    expect(ids(all)).toEqual(ordered);
    expect(all.nextCursor).toBeNull();
    // The same items as the API key's read of the connection.
    const keyed = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/incidents?integrationId=${target.connectionId}&mode=sandbox`);
    expect(all.items).toEqual(keyed.json().items);
  });

  it('filters by status across pages, and answers an empty page with a null cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(target.connectionId, `?status=open&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...ids(res.json()));
      cursor = res.json().nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(ordered.filter((id) => openIds.has(id)));
    expect(ids((await list(target.connectionId, '?status=resolved')).json())).toEqual(ordered.filter((id) => !openIds.has(id)));
    const quiet = await createTarget(owner);
    expect((await list(quiet.connectionId)).json()).toEqual({ schemaVersion: 1, mode: 'sandbox', items: [], nextCursor: null });
  });

  it('refuses bad query members with 400 invalid_incident_query', async () => {
    for (const query of [
      '?status=closed',
      '?status=',
      '?limit=0',
      '?limit=101',
      '?limit=1.5',
      '?limit=1&limit=2',
      '?mode=sandbox',
      `?integrationId=${target.connectionId}`,
      '?x=1',
    ]) {
      await expectRefused(owner.user.id, () => list(target.connectionId, query), 400, 'invalid_incident_query');
    }
  });

  it('binds the cursor to workspace, connection, status filter and the CLI list (400 invalid_incident_cursor)', async () => {
    const first = (await list(target.connectionId, '?status=open&limit=1')).json();
    const cursor = encodeURIComponent(first.nextCursor);
    expect((await list(target.connectionId, `?status=open&limit=1&cursor=${cursor}`)).statusCode).toBe(200);
    const refused = (connectionId: string, query: string, workspace?: string) =>
      expectRefused(owner.user.id, () => list(connectionId, query, workspace), 400, 'invalid_incident_cursor');
    // Another status filter, or none.
    await refused(target.connectionId, `?status=resolved&cursor=${cursor}`);
    await refused(target.connectionId, `?cursor=${cursor}`);
    // Another connection of the workspace.
    const other = await createTarget(owner);
    await refused(other.connectionId, `?status=open&cursor=${cursor}`);
    // A second workspace of the same user: its cursor does not continue this list, nor this one that.
    const second = await bootstrapWorkspace(ctx, { email: owner.user.email, workspace: 'Second space' });
    expect(second.workspace.id).not.toBe(owner.workspace.id);
    const secondTarget = await createTarget(second);
    await insertIncident(ctx, secondTarget, { createdAt: '2025-03-01T10:00:00.000Z' });
    await insertIncident(ctx, secondTarget, { createdAt: '2025-03-01T09:00:00.000Z' });
    const secondCursor = (await list(secondTarget.connectionId, '?status=open&limit=1', second.workspace.slug)).json().nextCursor;
    expect(secondCursor).toEqual(expect.any(String));
    await refused(target.connectionId, `?status=open&cursor=${encodeURIComponent(secondCursor)}`);
    await refused(secondTarget.connectionId, `?status=open&cursor=${cursor}`, second.workspace.slug);
    // The API key's list of the same connection and filter has cursors of its own, in both directions.
    const keyed = await callWithKey(
      ctx,
      owner.apiKey.key,
      'GET',
      `/v1/incidents?integrationId=${target.connectionId}&mode=sandbox&status=open&limit=1`,
    );
    await refused(target.connectionId, `?status=open&cursor=${encodeURIComponent(keyed.json().nextCursor)}`);
    expectError(
      await callWithKey(
        ctx,
        owner.apiKey.key,
        'GET',
        `/v1/incidents?integrationId=${target.connectionId}&mode=sandbox&status=open&cursor=${cursor}`,
      ),
      400,
      'invalid_incident_cursor',
    );
    // Tampered, truncated and foreign-format cursors.
    const raw: string = first.nextCursor;
    for (const bad of [raw.slice(0, -1) + (raw.endsWith('A') ? 'B' : 'A'), raw.slice(0, 20), 'abc', '', `${raw}.x`]) {
      await refused(target.connectionId, `?status=open&cursor=${encodeURIComponent(bad)}`);
    }
  });

  it('answers 404 connection_not_found before looking at the cursor', async () => {
    const stranger = await bootstrapWorkspace(ctx);
    const strangerTarget = await createTarget(stranger);
    for (const id of [target.integrationId, strangerTarget.connectionId, 'int_00000000000000000000000000', 'x']) {
      await expectRefused(owner.user.id, () => list(id, '?cursor=abc'), 404, 'connection_not_found');
    }
  });
});

describe('GET /v1/cli/connections/{connectionId}/incidents/{incidentId}', () => {
  let owner: BootstrapResult;
  let cli: CliSession;
  let target: IncidentTarget;
  let incidentId: string;

  const detail = (connectionId: string, id: string, query = '') =>
    callCli(ctx, cli.accessToken, 'GET', `${detailUrl(connectionId, id)}${query}`, { workspace: owner.workspace.slug });

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    cli = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    target = await createTarget(owner);
    incidentId = await insertIncident(ctx, target, {
      createdAt: '2025-03-01T10:00:00.000Z',
      operationKey: 'POST /v1/orders:response:201',
      summary: 'Response of POST /v1/orders drifted from the contract',
      affectedRecords: 1204,
      observationIds: ['evt_b', 'evt_a'],
      evidenceTruncated: true,
    });
    await insertFinding(ctx, incidentId, {
      kind: 'undeclared_field',
      path: '/lines/-/sku',
      expected: 'no property sku',
      observed: 'string',
      forbidden: true,
      observationCount: 12,
    });
    await insertFinding(ctx, incidentId, {
      kind: 'type_mismatch',
      path: '/total',
      expected: 'number',
      observed: 'string',
      observationCount: 7,
    });
  });

  it('returns {schemaVersion, incident: detail} with the findings and evidence ids, as the API key read does', async () => {
    const res = await detail(target.connectionId, incidentId);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['incident', 'schemaVersion']);
    expect(body.schemaVersion).toBe(1);
    expect(body.incident).toMatchObject({
      id: incidentId,
      connectionId: target.connectionId,
      mode: 'sandbox',
      status: 'open',
      affectedRecords: 1204,
      observationIds: ['evt_b', 'evt_a'],
      evidenceTruncated: true,
      findings: [
        expect.objectContaining({ kind: 'undeclared_field', path: '/lines/-/sku', forbidden: true, observationCount: 12 }),
        expect.objectContaining({ kind: 'type_mismatch', path: '/total', observationCount: 7 }),
      ],
    });
    const keyed = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/incidents/${incidentId}?mode=sandbox`);
    expect(body.incident).toEqual(keyed.json().incident);
  });

  it("answers 404 incident_not_found for another connection's incident, an unknown or a malformed id", async () => {
    const other = await createTarget(owner);
    const otherIncident = await insertIncident(ctx, other, { createdAt: '2025-03-01T10:00:00.000Z' });
    const stranger = await bootstrapWorkspace(ctx);
    const strangerIncident = await insertIncident(ctx, await createTarget(stranger), { createdAt: '2025-03-01T10:00:00.000Z' });
    for (const id of [otherIncident, strangerIncident, 'inc_00000000000000000000000000', 'x', incidentId.toUpperCase()]) {
      await expectRefused(owner.user.id, () => detail(target.connectionId, id), 404, 'incident_not_found');
    }
    // The incident under its own connection is served.
    expect((await detail(other.connectionId, otherIncident)).statusCode).toBe(200);
  });

  it('answers 404 connection_not_found for a path connection that is not one of the workspace, even with a real incident', async () => {
    const stranger = await bootstrapWorkspace(ctx);
    const strangerTarget = await createTarget(stranger);
    for (const connectionId of [target.integrationId, strangerTarget.connectionId, 'int_00000000000000000000000000']) {
      await expectRefused(owner.user.id, () => detail(connectionId, incidentId), 404, 'connection_not_found');
    }
  });

  it('accepts no query parameter (400 invalid_incident_query)', async () => {
    for (const query of ['?mode=sandbox', '?x=1']) {
      await expectRefused(owner.user.id, () => detail(target.connectionId, incidentId, query), 400, 'invalid_incident_query');
    }
  });
});
