import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateApiKey, recheckAuthority } from '../management/auth/apiKeyAuth.js';
import { setWritePause } from '../management/maintenance.js';
import { advanceTestClock, resetTestClock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { RedisKeys } from '../shared/redis.js';
import { bootstrapWorkspace, callWithKey, callWithSession, countRows, createTestContext, type TestContext } from './helpers/context.js';
import { addAccountMember, addWorkspaceMember, auditActions, createAccountFor, createConsoleUser } from './helpers/consoleUsers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const uniqueSlug = (label = 'ws') => `${label}-${newId('ws_').slice(-10)}`;

async function workspaceRow(slug: string) {
  const { rows } = await ctx.deps.pool.query(
    'SELECT id, status, active, auth_epoch, archived_at, account_id FROM workspaces WHERE slug = $1',
    [slug],
  );
  return rows[0];
}

async function create(token: string, body: Record<string, unknown>) {
  return callWithSession(ctx, token, 'POST', '/workspaces', { body });
}

describe('GET /workspaces', () => {
  it('lists every membership with role, status, environments and canManageLifecycle', async () => {
    const boot = await bootstrapWorkspace(ctx, { workspace: 'Main workspace' });
    const other = await bootstrapWorkspace(ctx, { workspace: 'Shared with me', legacy: true });
    await addWorkspaceMember(ctx, other.workspace.id, boot.user.id, 'viewer');
    const stranger = await bootstrapWorkspace(ctx);

    const res = await callWithSession(ctx, boot.sessionToken, 'GET', '/workspaces');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { workspaces } = res.json();
    expect(workspaces).toHaveLength(2);
    expect(workspaces[0]).toEqual({
      id: boot.workspace.id,
      tenantId: boot.workspace.tenantId,
      name: 'Main workspace',
      slug: boot.workspace.slug,
      role: 'owner',
      active: true,
      status: 'active',
      environments: [
        { id: expect.stringMatching(/^env_/), name: 'Sandbox', slug: 'sandbox', category: 'sandbox', isDefault: true },
        { id: expect.stringMatching(/^env_/), name: 'Live', slug: 'live', category: 'live', isDefault: false },
      ],
      canManageLifecycle: true,
    });
    expect(workspaces[1]).toMatchObject({ id: other.workspace.id, role: 'viewer', canManageLifecycle: false });
    expect(workspaces[1].environments.map((e: { category: string }) => e.category)).toEqual(['development', 'staging', 'production']);
    expect(JSON.stringify(workspaces)).not.toContain(stranger.workspace.id);
  });

  it('includes archived workspaces', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect((await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`)).statusCode).toBe(200);
    const res = await callWithSession(ctx, boot.sessionToken, 'GET', '/workspaces');
    expect(res.json().workspaces).toEqual([expect.objectContaining({ slug: boot.workspace.slug, status: 'archived' })]);
  });

  it('needs a session (401) of a verified user (403); an API key is not a session', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const none = await callWithSession(ctx, null, 'GET', '/workspaces');
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: 'unauthenticated' });
    const withKey = await ctx.app.inject({ method: 'GET', url: '/workspaces', headers: { authorization: `Bearer ${boot.apiKey.key}` } });
    expect(withKey.statusCode).toBe(401);
    const unverified = await createConsoleUser(ctx, { verified: false });
    const res = await callWithSession(ctx, unverified.sessionToken, 'GET', '/workspaces');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'email_verification_required' });
  });

  it('refuses unknown query parameters', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const res = await callWithSession(ctx, boot.sessionToken, 'GET', '/workspaces?tenantId=x');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request' });
  });
});

describe('POST /workspaces', () => {
  it('creates an inactive canonical workspace with owner role under the only account, audited', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = uniqueSlug('team');
    const res = await create(boot.sessionToken, { name: '  Team Space ', slug });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const { workspace } = res.json();
    expect(workspace).toEqual({
      id: expect.stringMatching(/^ws_/),
      tenantId: expect.stringMatching(/^ten_/),
      name: 'Team Space',
      slug,
      role: 'owner',
      active: false,
      status: 'active',
      environments: [
        { id: expect.stringMatching(/^env_/), name: 'Sandbox', slug: 'sandbox', category: 'sandbox', isDefault: true },
        { id: expect.stringMatching(/^env_/), name: 'Live', slug: 'live', category: 'live', isDefault: false },
      ],
      canManageLifecycle: true,
    });
    const row = await workspaceRow(slug);
    expect(row).toMatchObject({ id: workspace.id, account_id: boot.account.id, active: false, status: 'active' });
    expect(
      await countRows(ctx, 'workspace_members', "workspace_id = $1 AND user_id = $2 AND role = 'owner'", [workspace.id, boot.user.id]),
    ).toBe(1);
    expect(await countRows(ctx, 'environments', 'workspace_id = $1', [workspace.id])).toBe(2);
    expect(await auditActions(ctx, workspace.id)).toEqual(['workspace.create']);
  });

  it('derives the slug from the name', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const name = `Café Ünïcode ${uniqueSlug()}`;
    const res = await create(boot.sessionToken, { name });
    expect(res.statusCode).toBe(201);
    expect(res.json().workspace.slug).toBe(`cafe-unicode-${name.split(' ')[2]}`);
  });

  it('creates a first Developer account for a user without one', async () => {
    const user = await createConsoleUser(ctx, { name: 'Grace' });
    const res = await create(user.sessionToken, { name: 'First', slug: uniqueSlug() });
    expect(res.statusCode).toBe(201);
    const { rows } = await ctx.deps.pool.query(
      `SELECT a.plan, a.name, am.role FROM accounts a JOIN account_members am ON am.account_id = a.id WHERE am.user_id = $1`,
      [user.userId],
    );
    expect(rows).toEqual([{ plan: 'developer', name: "Grace's account", role: 'owner' }]);
    expect((await workspaceRow(res.json().workspace.slug)).account_id).toBeDefined();
  });

  it('needs billingAccountId when the user administers several accounts, and honours it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const second = await createAccountFor(ctx, boot.user.id);
    const slug = uniqueSlug();
    const missing = await create(boot.sessionToken, { name: 'Where', slug });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ error: 'account_required' });
    expect(await workspaceRow(slug)).toBeUndefined();

    const res = await create(boot.sessionToken, { name: 'There', slug, billingAccountId: second });
    expect(res.statusCode).toBe(201);
    expect((await workspaceRow(slug)).account_id).toBe(second);
  });

  it('lets an account admin create under the account', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const admin = await createConsoleUser(ctx);
    await addAccountMember(ctx, boot.account.id, admin.userId, 'admin');
    const slug = uniqueSlug();
    const res = await create(admin.sessionToken, { name: 'Admin made', slug, billingAccountId: boot.account.id });
    expect(res.statusCode).toBe(201);
    expect((await workspaceRow(slug)).account_id).toBe(boot.account.id);
  });

  it('answers 404 account_not_found for unknown and foreign accounts, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const foreign = await bootstrapWorkspace(ctx);
    for (const billingAccountId of [newId('acct_'), foreign.account.id]) {
      const slug = uniqueSlug();
      const res = await create(boot.sessionToken, { name: 'Nope', slug, billingAccountId });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'account_not_found' });
      expect(await workspaceRow(slug)).toBeUndefined();
    }
  });

  const badBodies: [string, Record<string, unknown>, string][] = [
    ['a one-character name', { name: 'x' }, 'invalid_workspace_name'],
    ['an 81-character name', { name: 'n'.repeat(81) }, 'invalid_workspace_name'],
    ['a blank name', { name: '      ' }, 'invalid_workspace_name'],
    ['no name', { slug: 'fine-slug' }, 'invalid_workspace_name'],
    ['a numeric name', { name: 42 }, 'invalid_workspace_name'],
    ['an uppercase slug', { name: 'Good name', slug: 'Upper' }, 'invalid_workspace_slug'],
    ['a slug with an underscore', { name: 'Good name', slug: 'a_b' }, 'invalid_workspace_slug'],
    ['a slug starting with a hyphen', { name: 'Good name', slug: '-ab' }, 'invalid_workspace_slug'],
    ['a 49-character slug', { name: 'Good name', slug: 'a'.repeat(49) }, 'invalid_workspace_slug'],
    ['a numeric slug', { name: 'Good name', slug: 7 }, 'invalid_workspace_slug'],
    ['a malformed billingAccountId', { name: 'Good name', billingAccountId: 'acct_123' }, 'invalid_billing_account_id'],
    ['a workspace id as billingAccountId', { name: 'Good name', billingAccountId: newId('ws_') }, 'invalid_billing_account_id'],
    ['a numeric billingAccountId', { name: 'Good name', billingAccountId: 5 }, 'invalid_billing_account_id'],
    ['a caller-chosen role', { name: 'Good name', role: 'owner' }, 'invalid_request'],
    ['a caller-chosen tenant id', { name: 'Good name', tenantId: 'ten_x' }, 'invalid_request'],
    ['a caller-chosen plan', { name: 'Good name', plan: 'enterprise' }, 'invalid_request'],
  ];
  for (const [label, body, code] of badBodies) {
    it(`refuses ${label} with 400 ${code} and writes nothing`, async () => {
      const boot = await bootstrapWorkspace(ctx);
      const res = await create(boot.sessionToken, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: code });
      expect(await countRows(ctx, 'workspace_members', 'user_id = $1', [boot.user.id])).toBe(1);
    });
  }

  it('refuses a taken slug, explicit or derived, with 409 workspace_slug_unavailable', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const taken = await bootstrapWorkspace(ctx);
    const explicit = await create(boot.sessionToken, { name: 'Copy', slug: taken.workspace.slug });
    expect(explicit.statusCode).toBe(409);
    expect(explicit.json()).toEqual({ error: 'workspace_slug_unavailable' });
    const derivedName = `Derived ${uniqueSlug()}`;
    expect((await create(taken.sessionToken, { name: derivedName })).statusCode).toBe(201);
    const derived = await create(boot.sessionToken, { name: derivedName });
    expect(derived.statusCode).toBe(409);
    expect(derived.json()).toEqual({ error: 'workspace_slug_unavailable' });
    expect(await countRows(ctx, 'workspace_members', 'user_id = $1', [boot.user.id])).toBe(1);
    expect(await countRows(ctx, 'workspaces', 'account_id = $1', [boot.account.id])).toBe(1);
  });

  it('stops at 3 active workspaces per Developer account (409), archived ones not counted', async () => {
    const boot = await bootstrapWorkspace(ctx);
    for (let i = 0; i < 2; i++) expect((await create(boot.sessionToken, { name: `Extra ${i}`, slug: uniqueSlug() })).statusCode).toBe(201);
    const slug = uniqueSlug();
    const res = await create(boot.sessionToken, { name: 'Fourth', slug });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'workspace_limit_reached' });
    expect(await workspaceRow(slug)).toBeUndefined();
    expect(await countRows(ctx, 'workspaces', 'account_id = $1', [boot.account.id])).toBe(3);

    expect((await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`)).statusCode).toBe(200);
    expect((await create(boot.sessionToken, { name: 'Fourth', slug })).statusCode).toBe(201);
  });

  it('lets only one of two concurrent creations take the last slot', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect((await create(boot.sessionToken, { name: 'Second', slug: uniqueSlug() })).statusCode).toBe(201);
    const results = await Promise.all([
      create(boot.sessionToken, { name: 'Race A', slug: uniqueSlug() }),
      create(boot.sessionToken, { name: 'Race B', slug: uniqueSlug() }),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(await countRows(ctx, 'workspaces', "account_id = $1 AND status = 'active'", [boot.account.id])).toBe(3);
  });

  it('refuses creation under a suspended account with 409 account_unavailable', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await ctx.deps.pool.query("UPDATE accounts SET status = 'suspended' WHERE id = $1", [boot.account.id]);
    const slug = uniqueSlug();
    const res = await create(boot.sessionToken, { name: 'Suspended', slug });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'account_unavailable' });
    expect(await workspaceRow(slug)).toBeUndefined();
  });

  it('rate-limits creations per user in a rolling hour (429 with Retry-After); failed attempts do not count', async () => {
    const user = await createConsoleUser(ctx);
    const taken = await bootstrapWorkspace(ctx);
    const configured = ctx.deps.config.workspaceCreationsPerHour;
    ctx.deps.config.workspaceCreationsPerHour = 2;
    try {
      expect((await create(user.sessionToken, { name: 'Taken', slug: taken.workspace.slug })).statusCode).toBe(409);
      expect((await create(user.sessionToken, { name: 'x' })).statusCode).toBe(400);
      expect((await create(user.sessionToken, { name: 'One', slug: uniqueSlug() })).statusCode).toBe(201);
      expect((await create(user.sessionToken, { name: 'Two', slug: uniqueSlug() })).statusCode).toBe(201);
      const slug = uniqueSlug();
      const limited = await create(user.sessionToken, { name: 'Three', slug });
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: 'workspace_creation_rate_limited' });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(3500);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(await workspaceRow(slug)).toBeUndefined();
      expect(await countRows(ctx, 'workspace_members', 'user_id = $1', [user.userId])).toBe(2);

      await advanceTestClock(ctx.deps.redis, 3600 * 1000);
      expect((await create(user.sessionToken, { name: 'Three', slug })).statusCode).toBe(201);
    } finally {
      ctx.deps.config.workspaceCreationsPerHour = configured;
      await resetTestClock(ctx.deps.redis);
      await ctx.deps.clock.sync();
      await ctx.deps.redis.del(RedisKeys.workspaceCreations(user.userId));
    }
  });

  it('needs a verified session, CSRF protection, and honours the maintenance pause', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = uniqueSlug();
    expect((await callWithSession(ctx, null, 'POST', '/workspaces', { body: { name: 'No session', slug } })).statusCode).toBe(401);
    const csrf = await ctx.app.inject({
      method: 'POST',
      url: '/workspaces',
      headers: { cookie: `session=${boot.sessionToken}`, origin: 'https://evil.example' },
      payload: { name: 'Forged', slug },
    });
    expect(csrf.statusCode).toBe(403);
    expect(csrf.json()).toEqual({ error: 'forbidden' });
    const unverified = await createConsoleUser(ctx, { verified: false });
    const res = await create(unverified.sessionToken, { name: 'Unverified', slug });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'email_verification_required' });
    await setWritePause(ctx.deps.redis, true);
    try {
      const paused = await create(boot.sessionToken, { name: 'Paused', slug });
      expect(paused.statusCode).toBe(503);
      expect(paused.json()).toEqual({ error: 'mode_cutover_write_paused' });
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    expect(await workspaceRow(slug)).toBeUndefined();
  });
});

describe('POST /workspaces/{slug}/activate', () => {
  it('lets an owner or admin activate; repeating is a no-op; viewers get 403, others 404', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await create(boot.sessionToken, { name: 'To activate', slug: uniqueSlug() });
    const { slug, id } = created.json().workspace;
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, id, viewer.userId, 'viewer');
    const forbidden = await callWithSession(ctx, viewer.sessionToken, 'POST', `/workspaces/${slug}/activate`);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ error: 'forbidden' });
    const stranger = await bootstrapWorkspace(ctx);
    for (const [token, target] of [
      [stranger.sessionToken, slug],
      [boot.sessionToken, uniqueSlug('missing')],
    ]) {
      const res = await callWithSession(ctx, token, 'POST', `/workspaces/${target}/activate`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'workspace_not_found' });
    }
    expect((await workspaceRow(slug)).active).toBe(false);

    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, id, admin.userId, 'admin');
    const res = await callWithSession(ctx, admin.sessionToken, 'POST', `/workspaces/${slug}/activate`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ workspace: { slug, active: true } });
    expect((await workspaceRow(slug)).active).toBe(true);
    const again = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/activate`, { body: {} });
    expect(again.statusCode).toBe(200);
    expect(await auditActions(ctx, id)).toEqual(['workspace.activate', 'workspace.create']);
  });

  it('refuses an archived workspace (409 workspace_unavailable) and a body with fields (400)', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const withBody = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/activate`, {
      body: { active: false },
    });
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json()).toEqual({ error: 'invalid_request' });
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`);
    const res = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/activate`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'workspace_unavailable' });
  });
});

describe('archive and restore', () => {
  it('archives: status, archived_at, epoch, audit; the API keys then fail with 401; repeating is a no-op', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = boot.workspace.slug;
    const before = await workspaceRow(slug);
    const principal = await authenticateApiKey(ctx.deps.pool, `Bearer ${boot.apiKey.key}`, ctx.deps.clock.nowMs());
    expect((await callWithKey(ctx, boot.apiKey.key, 'GET', '/v1/environments')).statusCode).toBe(200);

    const res = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/archive`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ workspace: { slug, status: 'archived' } });
    const after = await workspaceRow(slug);
    expect(after.status).toBe('archived');
    expect(after.archived_at).not.toBeNull();
    expect(Number(after.auth_epoch)).toBe(Number(before.auth_epoch) + 1);
    expect(await auditActions(ctx, boot.workspace.id)).toContain('workspace.archive');
    await expect(authenticateApiKey(ctx.deps.pool, `Bearer ${boot.apiKey.key}`, ctx.deps.clock.nowMs())).rejects.toMatchObject({
      code: 'unauthenticated',
      status: 401,
    });
    const v1 = await callWithKey(ctx, boot.apiKey.key, 'GET', '/v1/environments');
    expect(v1.statusCode).toBe(401);
    expect(v1.json()).toEqual({ error: 'unauthenticated' });
    expect(await recheckAuthority(ctx.deps.pool, principal, 'integrations:read', ctx.deps.clock.nowMs())).toBe('workspace');

    const again = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/archive`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ workspace: { slug, status: 'archived' } });
    expect((await workspaceRow(slug)).auth_epoch).toBe(after.auth_epoch);
  });

  it('restores: status active, a new epoch that invalidates earlier admissions, keys work again', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = boot.workspace.slug;
    const principal = await authenticateApiKey(ctx.deps.pool, `Bearer ${boot.apiKey.key}`, ctx.deps.clock.nowMs());
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/archive`);
    const archived = await workspaceRow(slug);

    const res = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/restore`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ workspace: { slug, status: 'active' } });
    const restored = await workspaceRow(slug);
    expect(restored).toMatchObject({ status: 'active', archived_at: null });
    expect(Number(restored.auth_epoch)).toBe(Number(archived.auth_epoch) + 1);
    expect(await recheckAuthority(ctx.deps.pool, principal, 'integrations:read', ctx.deps.clock.nowMs())).toBe('epoch');
    expect((await authenticateApiKey(ctx.deps.pool, `Bearer ${boot.apiKey.key}`, ctx.deps.clock.nowMs())).workspaceId).toBe(
      boot.workspace.id,
    );
    expect((await auditActions(ctx, boot.workspace.id)).slice(0, 2)).toEqual(['workspace.restore', 'workspace.archive']);

    const again = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/restore`);
    expect(again.statusCode).toBe(200);
    expect((await workspaceRow(slug)).auth_epoch).toBe(restored.auth_epoch);
  });

  it('moves the credential epoch of the workspace connections for the ingest edge', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const env = await ctx.deps.pool.query("SELECT id FROM environments WHERE workspace_id = $1 AND mode = 'sandbox'", [boot.workspace.id]);
    const integrationId = newId('wint_');
    const connectionId = newId('int_');
    const now = ctx.deps.clock.now();
    await ctx.deps.pool.query(
      `INSERT INTO integrations (id, workspace_id, name, provider, direction, protocol, integration_key, revision, created_at)
       VALUES ($1, $2, 'Orders', 'acme', 'outbound', 'http-api', $3, '1', $4)`,
      [integrationId, boot.workspace.id, newId('svc_int_'), now],
    );
    await ctx.deps.pool.query(
      `INSERT INTO connections (id, integration_id, workspace_id, environment_id, mode, connection_key, revision, created_at)
       VALUES ($1, $2, $3, $4, 'sandbox', $5, '1', $6)`,
      [connectionId, integrationId, boot.workspace.id, env.rows[0].id, newId('svc_conn_v1.'), now],
    );
    const epoch = async () => Number((await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connectionId))) ?? 0);
    const start = await epoch();
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`);
    const archived = await epoch();
    expect(archived).toBeGreaterThan(start);
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/restore`);
    expect(await epoch()).toBeGreaterThan(archived);
  });

  it('refuses a restore beyond the Developer cap with 409 workspace_limit_reached, changing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`);
    for (let i = 0; i < 3; i++) expect((await create(boot.sessionToken, { name: `Fill ${i}`, slug: uniqueSlug() })).statusCode).toBe(201);
    const archived = await workspaceRow(boot.workspace.slug);
    const res = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/restore`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'workspace_limit_reached' });
    expect(await workspaceRow(boot.workspace.slug)).toEqual(archived);
    expect(await auditActions(ctx, boot.workspace.id)).not.toContain('workspace.restore');
  });

  it('refuses a restore under a suspended account with 409 account_unavailable', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`);
    await ctx.deps.pool.query("UPDATE accounts SET status = 'suspended' WHERE id = $1", [boot.account.id]);
    const res = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/restore`);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'account_unavailable' });
    expect((await workspaceRow(boot.workspace.slug)).status).toBe('archived');
  });

  it('answers 404 to everyone but a workspace owner who administers the account', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = boot.workspace.slug;
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, boot.workspace.id, viewer.userId, 'viewer');
    const workspaceAdmin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, boot.workspace.id, workspaceAdmin.userId, 'admin');
    await addAccountMember(ctx, boot.account.id, workspaceAdmin.userId, 'owner');
    const ownerOnly = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, boot.workspace.id, ownerOnly.userId, 'owner');
    const accountOnly = await createConsoleUser(ctx);
    await addAccountMember(ctx, boot.account.id, accountOnly.userId, 'admin');
    const stranger = await bootstrapWorkspace(ctx);
    const before = await workspaceRow(slug);

    for (const action of ['archive', 'restore']) {
      for (const token of [
        viewer.sessionToken,
        workspaceAdmin.sessionToken,
        ownerOnly.sessionToken,
        accountOnly.sessionToken,
        stranger.sessionToken,
      ]) {
        const res = await callWithSession(ctx, token, 'POST', `/workspaces/${slug}/${action}`);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error: 'workspace_not_found' });
      }
      const missing = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${uniqueSlug('gone')}/${action}`);
      expect(missing.statusCode).toBe(404);
      const unsluggable = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${'Not-A-Slug'.repeat(6)}/${action}`);
      expect(unsluggable.statusCode).toBe(404);
    }
    expect(await workspaceRow(slug)).toEqual(before);

    // A workspace owner who is an account admin may.
    const manager = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, boot.workspace.id, manager.userId, 'owner');
    await addAccountMember(ctx, boot.account.id, manager.userId, 'admin');
    const listed = await callWithSession(ctx, manager.sessionToken, 'GET', '/workspaces');
    expect(listed.json().workspaces[0].canManageLifecycle).toBe(true);
    expect((await callWithSession(ctx, manager.sessionToken, 'POST', `/workspaces/${slug}/archive`)).statusCode).toBe(200);
  });

  it('needs a session, CSRF, no body fields, and respects the maintenance pause', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = boot.workspace.slug;
    expect((await callWithSession(ctx, null, 'POST', `/workspaces/${slug}/archive`)).statusCode).toBe(401);
    const csrf = await ctx.app.inject({
      method: 'POST',
      url: `/workspaces/${slug}/archive`,
      headers: { cookie: `session=${boot.sessionToken}` },
    });
    expect(csrf.statusCode).toBe(403);
    const withBody = await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/archive`, { body: { force: true } });
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json()).toEqual({ error: 'invalid_request' });
    await setWritePause(ctx.deps.redis, true);
    try {
      expect((await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/archive`)).statusCode).toBe(503);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    expect((await workspaceRow(slug)).status).toBe('active');
  });
});
