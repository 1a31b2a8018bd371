import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { newId } from '../shared/ids.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import { insertIncident as insertIncidentRow, type IncidentInput, type IncidentTarget } from './helpers/incidents.js';
import { createIntegration, insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';

// Incident reads for API keys (00-decisions §5; 03 "Incident"; list and cursor rules of 03).
// The analyzer that writes incidents is built elsewhere, so rows go straight into PostgreSQL
// (test/helpers/incidents.ts).

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

type Target = IncidentTarget;

async function createTarget(boot: BootstrapResult, mode: 'sandbox' | 'live' = 'sandbox'): Promise<Target> {
  const created = await createIntegration(ctx, boot.apiKey.key, { mode });
  return {
    workspaceId: boot.workspace.id,
    integrationId: created.integration.id,
    connectionId: created.integration.connectionId,
    environmentId: created.integration.environmentId,
    mode,
  };
}

const insertIncident = (target: Target, input: IncidentInput) => insertIncidentRow(ctx, target, input);

const list = (key: string | null, query: string) => callWithKey(ctx, key, 'GET', `/v1/incidents${query}`);
const detail = (key: string | null, id: string, query = '?mode=sandbox') => callWithKey(ctx, key, 'GET', `/v1/incidents/${id}${query}`);
const listIds = (body: { items: { id: string }[] }) => body.items.map((item) => item.id);

async function expectError(res: Awaited<ReturnType<typeof list>>, status: number, error: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual({ error });
}

describe('GET /v1/incidents', () => {
  let owner: BootstrapResult;
  let target: Target;
  let ordered: string[];
  let openIds: Set<string>;

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    target = await createTarget(owner, 'sandbox');
    const [tieLow, tieHigh] = [newId('inc_'), newId('inc_')];
    const a = await insertIncident(target, { createdAt: '2025-03-01T10:00:05.000Z' });
    const b = await insertIncident(target, { createdAt: '2025-03-01T10:00:04.000Z', status: 'resolved' });
    // Two rows within one millisecond: the page boundary falls between them.
    const c = await insertIncident(target, { createdAt: '2025-03-01T10:00:03.000200Z' });
    const d = await insertIncident(target, { createdAt: '2025-03-01T10:00:03.000100Z', status: 'resolved' });
    // Same instant: id descending decides.
    await insertIncident(target, { id: tieLow, createdAt: '2025-03-01T10:00:02.000Z' });
    await insertIncident(target, { id: tieHigh, createdAt: '2025-03-01T10:00:02.000Z', status: 'resolved' });
    const g = await insertIncident(target, { createdAt: '2025-03-01T10:00:01.000Z' });
    ordered = [a, b, c, d, tieHigh, tieLow, g];
    openIds = new Set([a, c, tieLow, g]);
    // Neighbours that must never appear: another connection of the workspace, and the other mode's.
    const other = await createTarget(owner, 'sandbox');
    await insertIncident(other, { createdAt: '2025-03-01T10:00:06.000Z' });
    const live = await insertSlotConnection(ctx, {
      workspaceId: owner.workspace.id,
      integrationId: target.integrationId,
      category: 'live',
    });
    await insertIncident(
      { ...target, connectionId: live.connectionId, environmentId: live.environmentId, mode: 'live' },
      { createdAt: '2025-03-01T10:00:07.000Z' },
    );
  });

  it('lists newest first (createdAt, then id, descending) over three pages, uncached', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    for (let page = 0; page < 5; page++) {
      const res = await list(
        owner.apiKey.key,
        `?integrationId=${target.connectionId}&mode=sandbox&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['items', 'mode', 'nextCursor']);
      expect(body.mode).toBe('sandbox');
      seen.push(...listIds(body));
      sizes.push(body.items.length);
      cursor = body.nextCursor;
      if (cursor === null) break;
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(ordered);
    // Default limit (25) gives everything on one page with a null cursor.
    const all = (await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox`)).json();
    expect(listIds(all)).toEqual(ordered);
    expect(all.nextCursor).toBeNull();
  });

  it('returns exactly the incident list fields', async () => {
    const body = (await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&limit=2`)).json();
    expect(body.items[0]).toEqual({
      id: ordered[0],
      connectionId: target.connectionId,
      mode: 'sandbox',
      environmentId: target.environmentId,
      operationKey: expect.stringMatching(/^GET \/v1\/orders\/\d+:response:200$/),
      kind: 'schema-drift',
      status: 'open',
      summary: 'Orders drifted',
      affectedRecords: 3,
      resolutionState: 'active',
      firstObservedAt: '2025-02-01T00:00:00.000Z',
      lastObservedAt: '2025-02-02T00:00:00.000Z',
      createdAt: '2025-03-01T10:00:05.000Z',
      updatedAt: '2025-03-01T11:00:05.000Z',
      resolvedAt: null,
    });
    expect(body.items[1]).toMatchObject({
      status: 'resolved',
      resolutionState: 'resolved_by_contract',
      resolvedAt: '2025-03-02T00:00:00.000Z',
    });
  });

  it('filters by status, across pages', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(
        owner.apiKey.key,
        `?integrationId=${target.connectionId}&mode=sandbox&status=open&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...listIds(res.json()));
      cursor = res.json().nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(ordered.filter((id) => openIds.has(id)));
    const resolved = (await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&status=resolved`)).json();
    expect(listIds(resolved)).toEqual(ordered.filter((id) => !openIds.has(id)));
    for (const item of resolved.items) expect(item.status).toBe('resolved');
  });

  it('binds the cursor to workspace, connection, mode and status filter (400 invalid_incident_cursor)', async () => {
    const first = (await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&status=open&limit=1`)).json();
    const cursor = encodeURIComponent(first.nextCursor);
    // Same list: accepted.
    expect(
      (await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&status=open&limit=1&cursor=${cursor}`)).statusCode,
    ).toBe(200);
    // Another status filter, or none.
    await expectError(
      await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&status=resolved&cursor=${cursor}`),
      400,
      'invalid_incident_cursor',
    );
    await expectError(
      await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&cursor=${cursor}`),
      400,
      'invalid_incident_cursor',
    );
    // Another connection of the same workspace.
    const other = await createTarget(owner, 'sandbox');
    await expectError(
      await list(owner.apiKey.key, `?integrationId=${other.connectionId}&mode=sandbox&status=open&cursor=${cursor}`),
      400,
      'invalid_incident_cursor',
    );
    // A cursor of a list in another workspace.
    const stranger = await bootstrapWorkspace(ctx);
    const strangerTarget = await createTarget(stranger, 'sandbox');
    await insertIncident(strangerTarget, { createdAt: '2025-03-01T10:00:00.000Z' });
    await insertIncident(strangerTarget, { createdAt: '2025-03-01T09:00:00.000Z' });
    const strangerCursor = (
      await list(stranger.apiKey.key, `?integrationId=${strangerTarget.connectionId}&mode=sandbox&status=open&limit=1`)
    ).json().nextCursor;
    expect(strangerCursor).toEqual(expect.any(String));
    await expectError(
      await list(
        owner.apiKey.key,
        `?integrationId=${target.connectionId}&mode=sandbox&status=open&cursor=${encodeURIComponent(strangerCursor)}`,
      ),
      400,
      'invalid_incident_cursor',
    );
    // Tampered, truncated, foreign-format and empty cursors.
    const raw: string = first.nextCursor;
    const flipped = raw.slice(0, -1) + (raw.endsWith('A') ? 'B' : 'A');
    for (const bad of [flipped, raw.slice(0, 20), 'abc', '', `${raw}.x`]) {
      await expectError(
        await list(owner.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox&status=open&cursor=${encodeURIComponent(bad)}`),
        400,
        'invalid_incident_cursor',
      );
    }
  });

  it('answers an empty page with an empty array and a null cursor', async () => {
    const empty = await createTarget(owner, 'live');
    const res = await list(owner.apiKey.key, `?integrationId=${empty.connectionId}&mode=live`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ mode: 'live', items: [], nextCursor: null });
  });

  it('requires a connection (400 connection_required) and a valid mode and query (400 invalid_incident_query)', async () => {
    const key = owner.apiKey.key;
    const id = target.connectionId;
    await expectError(await list(key, '?mode=sandbox'), 400, 'connection_required');
    await expectError(await list(key, '?integrationId=&mode=sandbox'), 400, 'connection_required');
    await expectError(await list(key, ''), 400, 'connection_required');
    for (const query of [
      `?integrationId=${id}`,
      `?integrationId=${id}&mode=`,
      `?integrationId=${id}&mode=Sandbox`,
      `?integrationId=${id}&mode=production`,
      `?integrationId=${id}&mode=sandbox&mode=live`,
      `?integrationId=${id}&mode=sandbox&status=closed`,
      `?integrationId=${id}&mode=sandbox&status=`,
      `?integrationId=${id}&mode=sandbox&limit=0`,
      `?integrationId=${id}&mode=sandbox&limit=101`,
      `?integrationId=${id}&mode=sandbox&limit=1.5`,
      `?integrationId=${id}&mode=sandbox&limit=05`,
      `?integrationId=${id}&mode=sandbox&view=canonical`,
      `?integrationId=${id}&integrationId=${id}&mode=sandbox`,
      `?integrationId=${id}&mode=sandbox&status=%00`,
    ]) {
      await expectError(await list(key, query), 400, 'invalid_incident_query');
    }
    expect((await list(key, `?integrationId=${id}&mode=sandbox&limit=100`)).statusCode).toBe(200);
    expect((await list(key, `?integrationId=${id}&mode=sandbox&limit=1`)).statusCode).toBe(200);
  });

  it('answers 404 connection_not_found for the other mode, foreign, unknown, malformed and deleted connections', async () => {
    const key = owner.apiKey.key;
    // The sandbox connection does not exist in live.
    await expectError(await list(key, `?integrationId=${target.connectionId}&mode=live`), 404, 'connection_not_found');
    const stranger = await bootstrapWorkspace(ctx);
    const foreign = await createTarget(stranger, 'sandbox');
    await insertIncident(foreign, { createdAt: '2025-03-01T10:00:00.000Z' });
    for (const id of [
      foreign.connectionId,
      target.integrationId,
      'int_00000000000000000000000000',
      'int_x',
      target.connectionId.toUpperCase(),
      'inc_00000000000000000000000000',
      "int_' or 1=1--",
    ]) {
      await expectError(await list(key, `?integrationId=${encodeURIComponent(id)}&mode=sandbox`), 404, 'connection_not_found');
    }
    // The stranger reads their own, never ours.
    expect(listIds((await list(stranger.apiKey.key, `?integrationId=${foreign.connectionId}&mode=sandbox`)).json())).toHaveLength(1);
    await expectError(await list(stranger.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox`), 404, 'connection_not_found');
    const deleted = await createTarget(owner, 'sandbox');
    await insertIncident(deleted, { createdAt: '2025-03-01T10:00:00.000Z' });
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [deleted.connectionId]);
    await expectError(await list(key, `?integrationId=${deleted.connectionId}&mode=sandbox`), 404, 'connection_not_found');
  });

  it('requires incidents:read (403) and a valid key (401)', async () => {
    const reader = await bootstrapWorkspace(ctx, {
      email: owner.user.email,
      workspace: 'Default workspace',
      scopes: ['integrations:read', 'observations:read', 'repairs:read'],
    });
    expect(reader.workspace.id).toBe(owner.workspace.id);
    await expectError(await list(reader.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox`), 403, 'insufficient_scope');
    // Scope comes before query validation.
    await expectError(await list(reader.apiKey.key, ''), 403, 'insufficient_scope');
    await expectError(await list(null, `?integrationId=${target.connectionId}&mode=sandbox`), 401, 'unauthenticated');
    const narrow = await bootstrapWorkspace(ctx, { email: owner.user.email, workspace: 'Default workspace', scopes: ['incidents:read'] });
    expect((await list(narrow.apiKey.key, `?integrationId=${target.connectionId}&mode=sandbox`)).statusCode).toBe(200);
  });

  it('serves a legacy workspace connection in its classified mode', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id, 'Legacy feed');
    const staging = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'staging' });
    const id = await insertIncident(
      {
        workspaceId: legacy.workspace.id,
        integrationId,
        connectionId: staging.connectionId,
        environmentId: staging.environmentId,
        mode: staging.mode,
      },
      { createdAt: '2025-03-01T10:00:00.000Z' },
    );
    expect(staging.mode).toBe('sandbox');
    const res = await list(legacy.apiKey.key, `?integrationId=${staging.connectionId}&mode=sandbox`);
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toEqual([expect.objectContaining({ id, environmentId: staging.environmentId, mode: 'sandbox' })]);
    await expectError(await list(legacy.apiKey.key, `?integrationId=${staging.connectionId}&mode=live`), 404, 'connection_not_found');
  });
});

describe('GET /v1/incidents/{incidentId}', () => {
  let owner: BootstrapResult;
  let target: Target;
  let incidentId: string;

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    target = await createTarget(owner, 'sandbox');
    incidentId = await insertIncident(target, {
      createdAt: '2025-03-01T10:00:00.000Z',
      operationKey: 'POST /v1/orders:response:201',
      summary: 'Response of POST /v1/orders drifted from the contract',
      affectedRecords: 1204,
      observationIds: ['evt_b', 'evt_a', 'evt_c'],
      evidenceTruncated: true,
    });
    const findings: [string, string, string, string, boolean | null, number][] = [
      ['type_mismatch', '/total', 'number', 'string', null, 7],
      ['undeclared_field', '/lines/-/sku', 'no property sku', 'string', true, 12],
      ['required_field_missing', '/id', 'string', 'absent', null, 2],
      ['undeclared_field', '/id', 'no property id', 'string', null, 1],
      ['undeclared_field', '/note', 'no property note', 'string', false, 4],
    ];
    for (const [kind, path, expected, observed, forbidden, count] of findings) {
      await ctx.deps.pool.query(
        `INSERT INTO incident_findings (incident_id, kind, path, expected, observed, forbidden, observation_count, first_observed_at, last_observed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, '2025-02-01T00:00:00.000Z', '2025-02-02T00:00:00.000Z')`,
        [incidentId, kind, path, expected, observed, forbidden, count],
      );
    }
  });

  it('returns {incident: detail} with exactly the detail fields, findings sorted by path then kind, uncached', async () => {
    const res = await detail(owner.apiKey.key, incidentId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const finding = (kind: string, path: string, expected: string, observed: string, observationCount: number, forbidden?: boolean) => ({
      kind,
      path,
      expected,
      observed,
      ...(forbidden === undefined ? {} : { forbidden }),
      observationCount,
      firstObservedAt: '2025-02-01T00:00:00.000Z',
      lastObservedAt: '2025-02-02T00:00:00.000Z',
    });
    expect(res.json()).toEqual({
      incident: {
        id: incidentId,
        connectionId: target.connectionId,
        mode: 'sandbox',
        environmentId: target.environmentId,
        operationKey: 'POST /v1/orders:response:201',
        kind: 'schema-drift',
        status: 'open',
        summary: 'Response of POST /v1/orders drifted from the contract',
        affectedRecords: 1204,
        resolutionState: 'active',
        firstObservedAt: '2025-02-01T00:00:00.000Z',
        lastObservedAt: '2025-02-02T00:00:00.000Z',
        createdAt: '2025-03-01T10:00:00.000Z',
        updatedAt: '2025-03-01T11:00:00.000Z',
        resolvedAt: null,
        findings: [
          finding('required_field_missing', '/id', 'string', 'absent', 2),
          finding('undeclared_field', '/id', 'no property id', 'string', 1, false),
          finding('undeclared_field', '/lines/-/sku', 'no property sku', 'string', 12, true),
          finding('undeclared_field', '/note', 'no property note', 'string', 4, false),
          finding('type_mismatch', '/total', 'number', 'string', 7),
        ],
        observationIds: ['evt_b', 'evt_a', 'evt_c'],
        evidenceTruncated: true,
      },
    });
    // Redacted: nothing of the workspace, the Integration row or the producing contract version.
    for (const secret of [owner.workspace.id, target.integrationId, 'cv_01jx0000000000000000000000', owner.workspace.tenantId])
      expect(res.body).not.toContain(secret);
  });

  it('returns an incident without findings and a resolved one', async () => {
    const bare = await insertIncident(target, {
      createdAt: '2025-03-01T09:00:00.000Z',
      status: 'resolved',
      kind: 'unknown-operation',
      observationIds: [],
    });
    const body = (await detail(owner.apiKey.key, bare)).json();
    expect(body.incident).toMatchObject({
      id: bare,
      kind: 'unknown-operation',
      status: 'resolved',
      resolutionState: 'resolved_by_contract',
      resolvedAt: '2025-03-02T00:00:00.000Z',
      findings: [],
      observationIds: [],
      evidenceTruncated: false,
    });
  });

  it('requires a valid mode (400 invalid_incident_query) before looking the incident up', async () => {
    for (const query of [
      '',
      '?mode=',
      '?mode=SANDBOX',
      '?mode=production',
      '?mode=sandbox&mode=live',
      '?mode=sandbox&status=open',
      '?limit=1',
    ]) {
      await expectError(await detail(owner.apiKey.key, incidentId, query), 400, 'invalid_incident_query');
    }
    await expectError(await detail(owner.apiKey.key, 'inc_00000000000000000000000000', ''), 400, 'invalid_incident_query');
  });

  it('answers 404 incident_not_found for the other mode, unknown, malformed, foreign ids and deleted connections', async () => {
    const key = owner.apiKey.key;
    await expectError(await detail(key, incidentId, '?mode=live'), 404, 'incident_not_found');
    const stranger = await bootstrapWorkspace(ctx);
    const foreign = await createTarget(stranger, 'sandbox');
    const foreignIncident = await insertIncident(foreign, { createdAt: '2025-03-01T10:00:00.000Z' });
    for (const id of [
      foreignIncident,
      'inc_00000000000000000000000000',
      'inc_x',
      incidentId.toUpperCase(),
      target.connectionId,
      'x',
      encodeURIComponent("inc_' or 1=1--"),
    ]) {
      await expectError(await detail(key, id), 404, 'incident_not_found');
    }
    expect((await detail(stranger.apiKey.key, foreignIncident)).statusCode).toBe(200);
    await expectError(await detail(stranger.apiKey.key, incidentId), 404, 'incident_not_found');
    // A live incident in a live connection is read with mode=live only.
    const live = await createTarget(owner, 'live');
    const liveIncident = await insertIncident(live, { createdAt: '2025-03-01T10:00:00.000Z' });
    expect((await detail(key, liveIncident, '?mode=live')).statusCode).toBe(200);
    await expectError(await detail(key, liveIncident, '?mode=sandbox'), 404, 'incident_not_found');
    // Deleted connection, deleted Integration.
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [live.connectionId]);
    await expectError(await detail(key, liveIncident, '?mode=live'), 404, 'incident_not_found');
    const orphaned = await createTarget(owner, 'sandbox');
    const orphanedIncident = await insertIncident(orphaned, { createdAt: '2025-03-01T10:00:00.000Z' });
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [orphaned.integrationId]);
    await expectError(await detail(key, orphanedIncident), 404, 'incident_not_found');
  });

  it('requires incidents:read (403) and a valid key (401)', async () => {
    const reader = await bootstrapWorkspace(ctx, {
      email: owner.user.email,
      workspace: 'Default workspace',
      scopes: ['integrations:read', 'repairs:read'],
    });
    expect(reader.workspace.id).toBe(owner.workspace.id);
    await expectError(await detail(reader.apiKey.key, incidentId), 403, 'insufficient_scope');
    await expectError(await detail(reader.apiKey.key, incidentId, ''), 403, 'insufficient_scope');
    await expectError(await detail(null, incidentId), 401, 'unauthenticated');
  });
});

describe('GET /v1/connections/{connectionId} observation evidence', () => {
  it('shows latestObservationAt, openIncidentCount and observationState exactly as the inventory slot', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const target = await createTarget(owner, 'live');
    const readBoth = async () => {
      const connection = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/connections/${target.connectionId}`);
      expect(connection.statusCode, connection.body).toBe(200);
      const integration = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/integrations/${target.integrationId}`);
      expect(integration.statusCode, integration.body).toBe(200);
      const slot = integration.json().integration.connections.live;
      const body = connection.json();
      const evidence = {
        latestObservationAt: body.latestObservationAt,
        openIncidentCount: body.openIncidentCount,
        observationState: body.observationState,
      };
      expect(evidence).toEqual({
        latestObservationAt: slot.latestObservationAt,
        openIncidentCount: slot.openIncidentCount,
        observationState: slot.observationState,
      });
      return body;
    };

    let body = await readBoth();
    expect(body).toMatchObject({ latestObservationAt: null, openIncidentCount: 0, observationState: 'waiting_for_observation' });
    // The fields 01 lists stay.
    expect(Object.keys(body).sort()).toEqual([
      'activeContractVersionId',
      'credentialStatus',
      'direction',
      'environment',
      'id',
      'latestObservationAt',
      'name',
      'observationState',
      'openIncidentCount',
      'protocol',
      'provider',
      'revision',
      'workspaceIntegrationId',
    ]);

    await ctx.deps.pool.query('UPDATE connections SET latest_observation_at = $2 WHERE id = $1', [
      target.connectionId,
      new Date('2025-01-02T03:04:05.678Z'),
    ]);
    body = await readBoth();
    expect(body).toMatchObject({ latestObservationAt: '2025-01-02T03:04:05.678Z', openIncidentCount: 0, observationState: 'observed' });

    await ctx.deps.pool.query('UPDATE connections SET open_incident_count = 2 WHERE id = $1', [target.connectionId]);
    body = await readBoth();
    expect(body).toMatchObject({
      latestObservationAt: '2025-01-02T03:04:05.678Z',
      openIncidentCount: 2,
      observationState: 'incident_open',
    });

    // An open incident wins even without a recorded observation time.
    await ctx.deps.pool.query('UPDATE connections SET latest_observation_at = NULL WHERE id = $1', [target.connectionId]);
    body = await readBoth();
    expect(body).toMatchObject({ latestObservationAt: null, openIncidentCount: 2, observationState: 'incident_open' });

    await ctx.deps.pool.query('UPDATE connections SET open_incident_count = 0 WHERE id = $1', [target.connectionId]);
    body = await readBoth();
    expect(body.observationState).toBe('waiting_for_observation');
  });
});
