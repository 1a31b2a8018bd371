import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import fc from 'fast-check';
import { decodeInventoryCursor, encodeInventoryCursor } from '../management/integrations/inventoryCursor.js';
import { AppError } from '../shared/errors/index.js';
import { sha256Hex } from '../shared/secrets.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration, insertIntegrationRow, insertSlotConnection, type CreatedIntegration } from './helpers/integrations.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const list = (key: string | null, query = '') => callWithKey(ctx, key, 'GET', `/v1/integrations${query}`);
const readOne = (key: string | null, id: string) => callWithKey(ctx, key, 'GET', `/v1/integrations/${id}`);

async function environmentsOf(workspaceId: string): Promise<Record<string, string>> {
  const { rows } = await ctx.deps.pool.query<{ id: string; category: string }>(
    'SELECT id, category FROM environments WHERE workspace_id = $1',
    [workspaceId],
  );
  return Object.fromEntries(rows.map((row) => [row.category, row.id]));
}

async function expectError(resPromise: ReturnType<typeof list>, status: number, error: string) {
  const res = await resPromise;
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual({ error });
}

/** Collects every page of a listing, following `nextCursor` unchanged. */
async function allPages(key: string, base: string, limit: number) {
  const pages: { items: { id: string }[]; nextCursor: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?${base}${base ? '&' : ''}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await list(key, query);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor !== null && pages.length < 20);
  return pages;
}

describe('GET /v1/integrations?view=canonical', () => {
  let boot: BootstrapResult;
  let envs: Record<string, string>;
  let created: CreatedIntegration;

  beforeAll(async () => {
    boot = await bootstrapWorkspace(ctx);
    envs = await environmentsOf(boot.workspace.id);
    created = await createIntegration(ctx, boot.apiKey.key, {
      mode: 'sandbox',
      name: 'Orders sync',
      provider: 'Acme',
      direction: 'outbound',
      protocol: 'http-api',
    });
  });

  it('lists Integrations with both mode slots, a configured one and an exact not_configured one', async () => {
    const res = await list(boot.apiKey.key, '?view=canonical');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const connection = await ctx.deps.pool.query('SELECT revision FROM connections WHERE id = $1', [created.integration.connectionId]);
    const integration = await ctx.deps.pool.query('SELECT revision, created_at FROM integrations WHERE id = $1', [created.integration.id]);
    expect(res.json()).toEqual({
      model: 'canonical',
      nextCursor: null,
      items: [
        {
          id: created.integration.id,
          name: 'Orders sync',
          provider: 'Acme',
          direction: 'outbound',
          protocol: 'http-api',
          createdAt: integration.rows[0].created_at.toISOString(),
          revision: integration.rows[0].revision,
          connections: {
            sandbox: {
              status: 'configured',
              mode: 'sandbox',
              environmentId: envs.sandbox,
              connectionId: created.integration.connectionId,
              revision: connection.rows[0].revision,
              credentialStatus: 'active',
              activeContractVersionId: null,
              latestObservationAt: null,
              openIncidentCount: 0,
              observationState: 'waiting_for_observation',
            },
            live: { status: 'not_configured', mode: 'live', environmentId: envs.live },
          },
        },
      ],
    });
    expect(res.json().items[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Never credentials, hashes or keys.
    const token = created.collectorConfiguration.ingestToken;
    for (const secret of [
      token,
      sha256Hex(token),
      'svc_ing_',
      created.collectorConfiguration.connectionKey,
      created.collectorConfiguration.integrationKey,
    ]) {
      expect(res.body).not.toContain(secret);
    }
  });

  it('derives observationState: observed after traffic, incident_open with an open incident', async () => {
    const own = await bootstrapWorkspace(ctx);
    const one = await createIntegration(ctx, own.apiKey.key, { mode: 'live' });
    const observedAt = new Date('2025-01-02T03:04:05.678Z');
    await ctx.deps.pool.query('UPDATE connections SET latest_observation_at = $2 WHERE id = $1', [
      one.integration.connectionId,
      observedAt,
    ]);
    let slot = (await list(own.apiKey.key, '?view=canonical')).json().items[0].connections.live;
    expect(slot).toMatchObject({
      status: 'configured',
      latestObservationAt: '2025-01-02T03:04:05.678Z',
      openIncidentCount: 0,
      observationState: 'observed',
    });
    await ctx.deps.pool.query('UPDATE connections SET open_incident_count = 2, active_contract_version_id = $2 WHERE id = $1', [
      one.integration.connectionId,
      'cv_01jx0000000000000000000000',
    ]);
    slot = (await list(own.apiKey.key, '?view=canonical')).json().items[0].connections.live;
    expect(slot).toMatchObject({
      openIncidentCount: 2,
      observationState: 'incident_open',
      activeContractVersionId: 'cv_01jx0000000000000000000000',
    });
    await ctx.deps.pool.query('UPDATE connections SET latest_observation_at = NULL WHERE id = $1', [one.integration.connectionId]);
    slot = (await list(own.apiKey.key, '?view=canonical')).json().items[0].connections.live;
    expect(slot.observationState).toBe('incident_open');
    const sandbox = (await list(own.apiKey.key, '?view=canonical')).json().items[0].connections.sandbox;
    expect(Object.keys(sandbox).sort()).toEqual(['environmentId', 'mode', 'status']);
  });

  it('shows both slots configured, independently, and leaves out deleted connections and Integrations', async () => {
    const own = await bootstrapWorkspace(ctx);
    const ownEnvs = await environmentsOf(own.workspace.id);
    const one = await createIntegration(ctx, own.apiKey.key, { mode: 'sandbox' });
    const live = await insertSlotConnection(ctx, { workspaceId: own.workspace.id, integrationId: one.integration.id, category: 'live' });
    let item = (await list(own.apiKey.key, '?view=canonical')).json().items[0];
    expect(item.connections.sandbox).toMatchObject({
      status: 'configured',
      connectionId: one.integration.connectionId,
      credentialStatus: 'active',
    });
    expect(item.connections.live).toMatchObject({
      status: 'configured',
      connectionId: live.connectionId,
      environmentId: ownEnvs.live,
      credentialStatus: 'not_issued',
      revision: live.revision,
    });
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [live.connectionId]);
    item = (await list(own.apiKey.key, '?view=canonical')).json().items[0];
    expect(item.connections.live).toEqual({ status: 'not_configured', mode: 'live', environmentId: ownEnvs.live });
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [one.integration.id]);
    expect((await list(own.apiKey.key, '?view=canonical')).json().items).toEqual([]);
  });

  it('pages in shared-id order with an opaque cursor: 7 Integrations, limit 3 → 3, 3, 1', async () => {
    const own = await bootstrapWorkspace(ctx);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await createIntegration(ctx, own.apiKey.key, { mode: i % 2 ? 'live' : 'sandbox', name: `Flow ${i}` })).integration.id);
    const pages = await allPages(own.apiKey.key, 'view=canonical', 3);
    expect(pages.map((page) => page.items.length)).toEqual([3, 3, 1]);
    expect(pages[2].nextCursor).toBeNull();
    const seen = pages.flatMap((page) => page.items.map((item) => item.id));
    expect(seen).toEqual([...ids].sort());
    expect(seen).toEqual(ids);
    expect(new Set(seen).size).toBe(7);
    // A later change shows on later pages only; the cursor stays valid.
    const first = await list(own.apiKey.key, '?view=canonical&limit=3');
    await createIntegration(ctx, own.apiKey.key, { mode: 'sandbox', name: 'Later' });
    const second = await list(own.apiKey.key, `?view=canonical&limit=3&cursor=${encodeURIComponent(first.json().nextCursor)}`);
    expect(second.json().items.map((item: { id: string }) => item.id)).toEqual(ids.slice(3, 6));
  });

  it('defaults to 50 items per page and accepts up to 100', async () => {
    const own = await bootstrapWorkspace(ctx);
    for (let i = 0; i < 101; i++) await insertIntegrationRow(ctx, own.workspace.id, `Bulk ${i}`);
    const page = (await list(own.apiKey.key, '?view=canonical')).json();
    expect(page.items).toHaveLength(50);
    expect(page.nextCursor).toEqual(expect.any(String));
    const big = (await list(own.apiKey.key, '?view=canonical&limit=100')).json();
    expect(big.items).toHaveLength(100);
    const rest = (await list(own.apiKey.key, `?view=canonical&limit=100&cursor=${encodeURIComponent(big.nextCursor)}`)).json();
    expect(rest.items).toHaveLength(1);
    expect(rest.nextCursor).toBeNull();
    expect(big.items[0].connections.sandbox.status).toBe('not_configured');
  });

  it('refuses cursors of another workspace, another view, tampered or unsupported ones with invalid_inventory_cursor', async () => {
    const own = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    for (let i = 0; i < 3; i++) {
      await createIntegration(ctx, own.apiKey.key, { mode: 'sandbox' });
      await createIntegration(ctx, stranger.apiKey.key, { mode: 'sandbox' });
    }
    const cursor = (await list(own.apiKey.key, '?view=canonical&limit=1')).json().nextCursor as string;
    const compatCursor = (await list(own.apiKey.key, '?limit=1')).json().nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect(compatCursor).toEqual(expect.any(String));
    const [payload, mac] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const reencode = (value: unknown) => `${Buffer.from(JSON.stringify(value)).toString('base64url')}.${mac}`;
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const secret = ctx.deps.config.secretEncryptionKey;
    const bad = [
      ['another workspace', stranger.apiKey.key, cursor],
      ['another view', own.apiKey.key, compatCursor],
      ['tampered payload', own.apiKey.key, reencode({ ...decoded, after: 'wint_00000000000000000000000000' })],
      ['payload of another workspace', own.apiKey.key, reencode({ ...decoded, ws: stranger.workspace.id })],
      ['tampered mac', own.apiKey.key, `${payload}.${flip(mac, 5)}`],
      ['tampered mac tail', own.apiKey.key, `${payload}.${flip(mac, 42)}`],
      [
        'unsupported version',
        own.apiKey.key,
        (() => {
          const v2 = Buffer.from(JSON.stringify({ ...decoded, v: 2 })).toString('base64url');
          const good = encodeInventoryCursor(secret, {
            view: 'canonical',
            workspaceId: own.workspace.id,
            environmentId: null,
            afterId: decoded.after,
          });
          return `${v2}.${good.split('.')[1]}`;
        })(),
      ],
      [
        'signed with another secret',
        own.apiKey.key,
        encodeInventoryCursor(Buffer.alloc(32, 7), {
          view: 'canonical',
          workspaceId: own.workspace.id,
          environmentId: null,
          afterId: decoded.after,
        }),
      ],
    ] as const;
    for (const [label, key, value] of bad) {
      const res = await list(key, `?view=canonical&cursor=${encodeURIComponent(value)}`);
      expect(res.statusCode, label).toBe(400);
      expect(res.json(), label).toEqual({ error: 'invalid_inventory_cursor' });
    }
    // The stranger's own first page is unaffected.
    expect((await list(stranger.apiKey.key, '?view=canonical')).json().items).toHaveLength(3);
  });

  it('answers 400 invalid_inventory_query for unknown parameters, views, bad limits, garbage cursors, environmentId with canonical', async () => {
    const queries = [
      '?view=canonical&x=1',
      '?foo=bar',
      '?view=legacy',
      '?view=',
      '?view=CANONICAL',
      '?view=canonical&view=canonical',
      '?view=canonical&limit=0',
      '?view=canonical&limit=101',
      '?view=canonical&limit=abc',
      '?view=canonical&limit=1.5',
      '?view=canonical&limit=-1',
      '?view=canonical&limit=050',
      '?view=canonical&limit=',
      '?view=canonical&limit=1&limit=2',
      '?view=canonical&cursor=garbage',
      '?view=canonical&cursor=',
      '?view=canonical&cursor=a.b',
      `?view=canonical&cursor=${'A'.repeat(700)}.${'B'.repeat(43)}`,
      `?view=canonical&environmentId=${envs.sandbox}`,
      '?environmentId=nope',
      '?limit=0',
      '?cursor=%00',
    ];
    for (const query of queries) {
      const res = await list(boot.apiKey.key, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toEqual({ error: 'invalid_inventory_query' });
    }
  });

  it('answers 409 workspace_modes_unavailable for a legacy workspace', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    await expectError(list(legacy.apiKey.key, '?view=canonical'), 409, 'workspace_modes_unavailable');
    await expectError(list(legacy.apiKey.key, '?view=canonical&limit=5'), 409, 'workspace_modes_unavailable');
  });

  it('answers 409 workspace_modes_unavailable for a canonical workspace with a mixed topology', async () => {
    const own = await bootstrapWorkspace(ctx);
    await ctx.deps.pool.query(
      "INSERT INTO environments (id, workspace_id, name, slug, category, mode, created_at) VALUES ('env_' || substr(md5(random()::text), 1, 26), $1, 'Production', 'production', 'production', 'live', now())",
      [own.workspace.id],
    );
    await expectError(list(own.apiKey.key, '?view=canonical'), 409, 'workspace_modes_unavailable');
  });

  it('requires integrations:read (403) and a valid key (401)', async () => {
    const manager = await bootstrapWorkspace(ctx, { scopes: ['integrations:manage', 'contracts:read'] });
    await expectError(list(manager.apiKey.key, '?view=canonical'), 403, 'insufficient_scope');
    await expectError(list(manager.apiKey.key, '?view=bogus'), 403, 'insufficient_scope');
    expect((await list(null, '?view=canonical')).statusCode).toBe(401);
    expect((await list('svc_api_wrong', '?view=canonical')).statusCode).toBe(401);
  });
});

describe('GET /v1/integrations (compatibility inventory)', () => {
  it('lists connections of a canonical workspace, filterable by exact environment', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const envs = await environmentsOf(boot.workspace.id);
    const a = await createIntegration(ctx, boot.apiKey.key, {
      mode: 'sandbox',
      name: 'A',
      provider: 'PA',
      direction: 'inbound',
      protocol: 'queue',
    });
    const b = await createIntegration(ctx, boot.apiKey.key, { mode: 'live', name: 'B' });
    const bSandbox = await insertSlotConnection(ctx, {
      workspaceId: boot.workspace.id,
      integrationId: b.integration.id,
      category: 'sandbox',
    });
    const res = await list(boot.apiKey.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body.model).toBe('canonical');
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((item: { id: string }) => item.id)).toEqual([
      a.integration.connectionId,
      b.integration.connectionId,
      bSandbox.connectionId,
    ]);
    expect(body.items[0]).toEqual({
      id: a.integration.connectionId,
      workspaceIntegrationId: a.integration.id,
      name: 'A',
      provider: 'PA',
      direction: 'inbound',
      protocol: 'queue',
      environmentId: envs.sandbox,
      mode: 'sandbox',
      credentialStatus: 'active',
      activeContractVersionId: null,
    });
    expect(res.body).not.toContain('svc_ing_');
    expect(res.body).not.toContain(a.collectorConfiguration.connectionKey);

    const live = (await list(boot.apiKey.key, `?environmentId=${envs.live}`)).json();
    expect(live.items.map((item: { id: string }) => item.id)).toEqual([b.integration.connectionId]);
    const sandbox = await allPages(boot.apiKey.key, `environmentId=${envs.sandbox}`, 1);
    expect(sandbox.flatMap((page) => page.items.map((item) => item.id))).toEqual([a.integration.connectionId, bSandbox.connectionId]);

    // The cursor is bound to its environment filter.
    const filtered = (await list(boot.apiKey.key, `?environmentId=${envs.sandbox}&limit=1`)).json().nextCursor;
    await expectError(
      list(boot.apiKey.key, `?environmentId=${envs.live}&cursor=${encodeURIComponent(filtered)}`),
      400,
      'invalid_inventory_cursor',
    );
    await expectError(list(boot.apiKey.key, `?cursor=${encodeURIComponent(filtered)}`), 400, 'invalid_inventory_cursor');
  });

  it('refuses an environment of another workspace or a malformed one with invalid_inventory_query', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    const strangerEnvs = await environmentsOf(stranger.workspace.id);
    await expectError(list(boot.apiKey.key, `?environmentId=${strangerEnvs.sandbox}`), 400, 'invalid_inventory_query');
    await expectError(list(boot.apiKey.key, '?environmentId=env_00000000000000000000000000'), 400, 'invalid_inventory_query');
    await expectError(list(boot.apiKey.key, '?environmentId=int_00000000000000000000000000'), 400, 'invalid_inventory_query');
  });

  it('keeps the compatibility inventory for legacy workspaces, with their exact environments', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const envs = await environmentsOf(legacy.workspace.id);
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id);
    const dev = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'development' });
    const prod = await insertSlotConnection(ctx, {
      workspaceId: legacy.workspace.id,
      integrationId: await insertIntegrationRow(ctx, legacy.workspace.id, 'Other'),
      category: 'production',
    });
    const res = await list(legacy.apiKey.key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.model).toBe('legacy');
    expect(body.items).toEqual([
      expect.objectContaining({
        id: dev.connectionId,
        workspaceIntegrationId: integrationId,
        environmentId: envs.development,
        mode: 'sandbox',
        credentialStatus: 'not_issued',
      }),
      expect.objectContaining({ id: prod.connectionId, environmentId: envs.production, mode: 'live' }),
    ]);
    const staging = (await list(legacy.apiKey.key, `?environmentId=${envs.staging}`)).json();
    expect(staging).toEqual({ model: 'legacy', items: [], nextCursor: null });
  });

  it("does not show another workspace's connections", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    await createIntegration(ctx, stranger.apiKey.key, { mode: 'sandbox' });
    expect((await list(boot.apiKey.key)).json().items).toEqual([]);
    expect((await list(boot.apiKey.key, '?view=canonical')).json().items).toEqual([]);
  });
});

describe('GET /v1/integrations/{workspaceIntegrationId}', () => {
  it('returns one canonical Integration with both slots, uncached', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'live', name: 'Payouts', protocol: 'scheduled-feed' });
    await createIntegration(ctx, boot.apiKey.key, { mode: 'live', name: 'Other' });
    const res = await readOne(boot.apiKey.key, created.integration.id);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const listed = (await list(boot.apiKey.key, '?view=canonical')).json().items[0];
    expect(res.json()).toEqual({ model: 'canonical', integration: listed });
    expect(listed.id).toBe(created.integration.id);
    expect(listed.connections.live.connectionId).toBe(created.integration.connectionId);
    expect(listed.connections.sandbox.status).toBe('not_configured');
    expect(res.body).not.toContain('svc_ing_');
  });

  it('answers 404 integration_not_found for int_ ids, malformed, unknown, foreign and deleted ids', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    const own = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const foreign = await createIntegration(ctx, stranger.apiKey.key, { mode: 'sandbox' });
    const deleted = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [deleted.integration.id]);
    for (const id of [
      own.integration.connectionId,
      foreign.integration.id,
      deleted.integration.id,
      'wint_00000000000000000000000000',
      'wint_x',
      own.integration.id.toUpperCase(),
      'abc',
      encodeURIComponent("wint_' or '1'='1"),
    ]) {
      await expectError(readOne(boot.apiKey.key, id), 404, 'integration_not_found');
    }
  });

  it('answers 409 workspace_modes_unavailable for a legacy workspace', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id);
    await expectError(readOne(legacy.apiKey.key, integrationId), 409, 'workspace_modes_unavailable');
  });

  it('requires integrations:read (403) and a valid key (401)', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const manager = await bootstrapWorkspace(ctx, { email: boot.user.email, scopes: ['integrations:manage'] });
    await expectError(readOne(manager.apiKey.key, created.integration.id), 403, 'insufficient_scope');
    expect((await readOne(null, created.integration.id)).statusCode).toBe(401);
  });
});

describe('inventory cursor codec (property tests)', () => {
  const secret = Buffer.alloc(32, 1);
  const idChars = fc.constantFrom(...'0123456789abcdefghjkmnpqrstvwxyz'.split(''));
  const ulid = fc.array(idChars, { minLength: 26, maxLength: 26 }).map((chars) => chars.join(''));
  const codeOf = (fn: () => unknown): string => {
    try {
      fn();
      return 'accepted';
    } catch (error) {
      if (error instanceof AppError) return error.code;
      throw error;
    }
  };

  it('round-trips every cursor it issues, and only for the same workspace, view and filter', () => {
    fc.assert(
      fc.property(ulid, ulid, fc.boolean(), fc.option(ulid, { nil: null }), (ws, after, canonical, env) => {
        const view = canonical ? ('canonical' as const) : ('compatibility' as const);
        const environmentId = canonical || env === null ? null : `env_${env}`;
        const afterId = `${canonical ? 'wint_' : 'int_'}${after}`;
        const cursor = encodeInventoryCursor(secret, { view, workspaceId: `ws_${ws}`, environmentId, afterId });
        expect(decodeInventoryCursor(secret, cursor, { view, workspaceId: `ws_${ws}`, environmentId })).toBe(afterId);
        expect(codeOf(() => decodeInventoryCursor(secret, cursor, { view, workspaceId: `ws_${ws}x`, environmentId }))).toBe(
          'invalid_inventory_cursor',
        );
        expect(
          codeOf(() =>
            decodeInventoryCursor(secret, cursor, {
              view: canonical ? 'compatibility' : 'canonical',
              workspaceId: `ws_${ws}`,
              environmentId: null,
            }),
          ),
        ).toBe('invalid_inventory_cursor');
      }),
    );
  });

  it('refuses arbitrary and mutated input with one of the two catalogued codes, never accepting it', () => {
    const valid = encodeInventoryCursor(secret, {
      view: 'canonical',
      workspaceId: 'ws_a',
      environmentId: null,
      afterId: 'wint_01jx0000000000000000000000',
    });
    const mutated = fc
      .tuple(fc.nat({ max: valid.length - 1 }), fc.constantFrom(...'ABCabc012-_.'.split('')))
      .map(([at, char]) => valid.slice(0, at) + char + valid.slice(at + 1))
      .filter((value) => value !== valid);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), mutated), (raw) => {
        expect(['invalid_inventory_query', 'invalid_inventory_cursor']).toContain(
          codeOf(() => decodeInventoryCursor(secret, raw, { view: 'canonical', workspaceId: 'ws_a', environmentId: null })),
        );
      }),
      { numRuns: 500 },
    );
  });
});
