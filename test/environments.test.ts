import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const listEnvironments = (key: string | null, query = '') => callWithKey(ctx, key, 'GET', `/v1/environments${query}`);

async function storedEnvironments(workspaceId: string) {
  const { rows } = await ctx.deps.pool.query<{ id: string }>(
    'SELECT id FROM environments WHERE workspace_id = $1 ORDER BY id COLLATE "C"',
    [workspaceId],
  );
  return rows.map((row) => row.id);
}

describe('GET /v1/environments', () => {
  it("lists a canonical workspace's Sandbox (default) and Live environments by id, uncached", async () => {
    const boot = await bootstrapWorkspace(ctx, { scopes: ['integrations:read'] });
    const res = await listEnvironments(boot.apiKey.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const ids = await storedEnvironments(boot.workspace.id);
    expect(res.json()).toEqual({
      model: 'canonical',
      environments: [
        { id: ids[0], name: 'Sandbox', slug: 'sandbox', category: 'sandbox', mode: 'sandbox', isDefault: true },
        { id: ids[1], name: 'Live', slug: 'live', category: 'live', mode: 'live', isDefault: false },
      ],
    });
    expect(ids[0]).toMatch(/^env_[0-9a-z]{26}$/);
  });

  it("lists a legacy workspace's exact environments with their classified modes", async () => {
    const boot = await bootstrapWorkspace(ctx, { legacy: true, scopes: ['integrations:read'] });
    const res = await listEnvironments(boot.apiKey.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body.model).toBe('legacy');
    expect(body.environments.map((environment: { id: string }) => environment.id)).toEqual(await storedEnvironments(boot.workspace.id));
    expect(body.environments.map(({ id: _id, ...rest }: { id: string }) => rest)).toEqual([
      { name: 'Development', slug: 'development', category: 'development', mode: 'sandbox', isDefault: true },
      { name: 'Staging', slug: 'staging', category: 'staging', mode: 'sandbox', isDefault: false },
      { name: 'Production', slug: 'production', category: 'production', mode: 'live', isDefault: false },
    ]);
  });

  it('orders by environment id, not by creation or name', async () => {
    const boot = await bootstrapWorkspace(ctx);
    // An id that sorts before both existing ones (ULID time part of zero).
    const early = `env_00000000${boot.workspace.id.slice(-18)}`;
    await ctx.deps.pool.query(
      "INSERT INTO environments (id, workspace_id, name, slug, category, mode, created_at) VALUES ($1, $2, 'Zeta', 'zeta', 'staging', 'sandbox', now())",
      [early, boot.workspace.id],
    );
    const body = (await listEnvironments(boot.apiKey.key)).json();
    expect(body.environments.map((environment: { id: string }) => environment.id)).toEqual(await storedEnvironments(boot.workspace.id));
    expect(body.environments[0].id).toBe(early);
  });

  it("shows only the key's own workspace", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    const own = (await listEnvironments(boot.apiKey.key)).json().environments.map((environment: { id: string }) => environment.id);
    const foreign = await storedEnvironments(stranger.workspace.id);
    expect(own).toEqual(await storedEnvironments(boot.workspace.id));
    for (const id of foreign) expect(own).not.toContain(id);
  });

  it('accepts no query parameter: 400 invalid_inventory_query', async () => {
    const boot = await bootstrapWorkspace(ctx);
    for (const query of ['?mode=sandbox', '?limit=1', '?cursor=x', '?environmentId=env_00000000000000000000000000', '?view=canonical']) {
      const res = await listEnvironments(boot.apiKey.key, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_inventory_query' });
    }
  });

  it('requires integrations:read (403) and a valid key (401)', async () => {
    const manager = await bootstrapWorkspace(ctx, { scopes: ['integrations:manage', 'observations:read'] });
    const res = await listEnvironments(manager.apiKey.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient_scope' });
    // Authentication comes before the query check.
    expect((await listEnvironments(manager.apiKey.key, '?x=1')).statusCode).toBe(403);
    expect((await listEnvironments(null)).statusCode).toBe(401);
    expect((await listEnvironments(null, '?x=1')).statusCode).toBe(401);
    const session = await callWithKey(ctx, null, 'GET', '/v1/environments', { headers: { cookie: `session=${manager.sessionToken}` } });
    expect(session.statusCode).toBe(401);
  });
});
