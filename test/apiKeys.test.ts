import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateApiKey } from '../management/auth/apiKeyAuth.js';
import { setWritePause } from '../management/maintenance.js';
import { newId } from '../shared/ids.js';
import { sha256Hex } from '../shared/secrets.js';
import { bootstrapWorkspace, callWithKey, callWithSession, countRows, createTestContext, type TestContext } from './helpers/context.js';
import { addWorkspaceMember, auditActions, createConsoleUser } from './helpers/consoleUsers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const keysUrl = (slug: string) => `/workspaces/${slug}/api-keys`;
const authenticate = (key: string, nowMs = ctx.deps.clock.nowMs()) => authenticateApiKey(ctx.deps.pool, `Bearer ${key}`, nowMs);

describe('GET /workspaces/{slug}/api-keys', () => {
  it('lists the keys of the workspace without key material', async () => {
    const boot = await bootstrapWorkspace(ctx, { scopes: ['integrations:read'] });
    const other = await bootstrapWorkspace(ctx);
    const res = await callWithSession(ctx, boot.sessionToken, 'GET', keysUrl(boot.workspace.slug));
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      apiKeys: [
        {
          id: boot.apiKey.id,
          name: '',
          scopes: ['integrations:read'],
          createdAt: expect.stringMatching(/^\d{4}-.*\.\d{3}Z$/),
          expiresAt: null,
          revokedAt: null,
        },
      ],
    });
    expect(res.body).not.toContain(boot.apiKey.key);
    expect(res.body).not.toContain(sha256Hex(boot.apiKey.key));
    expect(res.body).not.toContain(other.apiKey.id);
  });
});

describe('POST /workspaces/{slug}/api-keys', () => {
  it('creates a key shown once, stored hashed, usable at once, audited', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const res = await callWithSession(ctx, boot.sessionToken, 'POST', keysUrl(boot.workspace.slug), {
      body: { name: ' CI deploys ', scopes: ['contracts:read', 'contracts:write'] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const { apiKey } = res.json();
    expect(apiKey).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'CI deploys',
      key: expect.stringMatching(/^svc_api_[A-Za-z0-9_-]{43}$/),
      scopes: ['contracts:read', 'contracts:write'],
      createdAt: expect.any(String),
      expiresAt: null,
    });
    const stored = await ctx.deps.pool.query('SELECT key_hash, workspace_id, created_by FROM api_keys WHERE id = $1', [apiKey.id]);
    expect(stored.rows[0]).toEqual({ key_hash: sha256Hex(apiKey.key), workspace_id: boot.workspace.id, created_by: boot.user.id });
    const principal = await authenticate(apiKey.key);
    expect(principal).toMatchObject({ keyId: apiKey.id, workspaceId: boot.workspace.id, scopes: ['contracts:read', 'contracts:write'] });
    expect(await auditActions(ctx, boot.workspace.id)).toContain('api_key.create');
    const audit = await ctx.deps.pool.query('SELECT metadata::text AS metadata FROM audit_events WHERE target_id = $1', [apiKey.id]);
    expect(audit.rows[0].metadata).not.toContain(apiKey.key);

    const listed = await callWithSession(ctx, boot.sessionToken, 'GET', keysUrl(boot.workspace.slug));
    expect(listed.json().apiKeys.map((k: { id: string }) => k.id)).toEqual([boot.apiKey.id, apiKey.id]);
    expect(listed.body).not.toContain(apiKey.key);
  });

  it('sets an expiry; the key stops authenticating after it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const res = await callWithSession(ctx, boot.sessionToken, 'POST', keysUrl(boot.workspace.slug), {
      body: { scopes: ['integrations:read'], expiresInSeconds: 3600 },
    });
    expect(res.statusCode).toBe(201);
    const { apiKey } = res.json();
    expect(Date.parse(apiKey.expiresAt) - Date.parse(apiKey.createdAt)).toBe(3600 * 1000);
    await authenticate(apiKey.key, Date.parse(apiKey.expiresAt) - 1);
    await expect(authenticate(apiKey.key, Date.parse(apiKey.expiresAt))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  const badBodies: [string, Record<string, unknown>][] = [
    ['no scopes', {}],
    ['an empty scope list', { scopes: [] }],
    ['an unknown scope', { scopes: ['integrations:read', 'admin:all'] }],
    ['a CLI scope', { scopes: ['service:cli:workspaces:read'] }],
    ['duplicate scopes', { scopes: ['integrations:read', 'integrations:read'] }],
    ['scopes as a string', { scopes: 'integrations:read' }],
    ['a 59-second lifetime', { scopes: ['integrations:read'], expiresInSeconds: 59 }],
    ['a fractional lifetime', { scopes: ['integrations:read'], expiresInSeconds: 90.5 }],
    ['a lifetime over 366 days', { scopes: ['integrations:read'], expiresInSeconds: 366 * 86400 + 1 }],
    ['a string lifetime', { scopes: ['integrations:read'], expiresInSeconds: '3600' }],
    ['a 121-character name', { scopes: ['integrations:read'], name: 'n'.repeat(121) }],
    ['a name with a control character', { scopes: ['integrations:read'], name: 'bad\u0007' }],
    ['an unknown field', { scopes: ['integrations:read'], workspaceId: 'ws_other' }],
  ];
  for (const [label, body] of badBodies) {
    it(`refuses ${label} with 400 invalid_api_key_request and writes nothing`, async () => {
      const boot = await bootstrapWorkspace(ctx);
      const res = await callWithSession(ctx, boot.sessionToken, 'POST', keysUrl(boot.workspace.slug), { body });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_api_key_request' });
      expect(await countRows(ctx, 'api_keys', 'workspace_id = $1', [boot.workspace.id])).toBe(1);
    });
  }

  it('needs a session, CSRF, and respects the maintenance pause', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const body = { scopes: ['integrations:read'] };
    expect((await callWithSession(ctx, null, 'POST', keysUrl(boot.workspace.slug), { body })).statusCode).toBe(401);
    const csrf = await ctx.app.inject({
      method: 'POST',
      url: keysUrl(boot.workspace.slug),
      headers: { cookie: `session=${boot.sessionToken}` },
      payload: body,
    });
    expect(csrf.statusCode).toBe(403);
    expect(csrf.json()).toEqual({ error: 'forbidden' });
    const withKey = await ctx.app.inject({
      method: 'POST',
      url: keysUrl(boot.workspace.slug),
      headers: { authorization: `Bearer ${boot.apiKey.key}` },
      payload: body,
    });
    expect(withKey.statusCode).toBe(401);
    await setWritePause(ctx.deps.redis, true);
    try {
      const paused = await callWithSession(ctx, boot.sessionToken, 'POST', keysUrl(boot.workspace.slug), { body });
      expect(paused.statusCode).toBe(503);
      expect(paused.json()).toEqual({ error: 'mode_cutover_write_paused' });
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    expect(await countRows(ctx, 'api_keys', 'workspace_id = $1', [boot.workspace.id])).toBe(1);
  });
});

describe('DELETE /workspaces/{slug}/api-keys/{id}', () => {
  it('revokes at once: the very next authentication fails; repeating is a no-op', async () => {
    const boot = await bootstrapWorkspace(ctx);
    expect((await callWithKey(ctx, boot.apiKey.key, 'GET', '/v1/environments')).statusCode).toBe(200);
    const res = await callWithSession(ctx, boot.sessionToken, 'DELETE', `${keysUrl(boot.workspace.slug)}/${boot.apiKey.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ revoked: true });
    await expect(authenticate(boot.apiKey.key)).rejects.toMatchObject({ code: 'unauthenticated', status: 401 });
    const next = await callWithKey(ctx, boot.apiKey.key, 'GET', '/v1/environments');
    expect(next.statusCode).toBe(401);
    expect(next.json()).toEqual({ error: 'unauthenticated' });
    const listed = await callWithSession(ctx, boot.sessionToken, 'GET', keysUrl(boot.workspace.slug));
    expect(listed.json().apiKeys[0].revokedAt).toEqual(expect.any(String));

    const again = await callWithSession(ctx, boot.sessionToken, 'DELETE', `${keysUrl(boot.workspace.slug)}/${boot.apiKey.id}`);
    expect(again.statusCode).toBe(200);
    expect((await auditActions(ctx, boot.workspace.id)).filter((a) => a === 'api_key.revoke')).toHaveLength(1);
  });

  it("answers 404 api_key_not_found for unknown, malformed and other workspaces' keys, revoking nothing", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    for (const id of [newId('key_'), 'key_x', other.apiKey.id]) {
      const res = await callWithSession(ctx, boot.sessionToken, 'DELETE', `${keysUrl(boot.workspace.slug)}/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'api_key_not_found' });
    }
    await authenticate(other.apiKey.key);
    await authenticate(boot.apiKey.key);
  });
});

describe('who may manage keys', () => {
  it('lets an admin manage; a viewer gets 403 forbidden; non-members, archived and unknown workspaces 404', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = boot.workspace.slug;
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, boot.workspace.id, admin.userId, 'admin');
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, boot.workspace.id, viewer.userId, 'viewer');
    const stranger = await bootstrapWorkspace(ctx);

    const created = await callWithSession(ctx, admin.sessionToken, 'POST', keysUrl(slug), { body: { scopes: ['integrations:read'] } });
    expect(created.statusCode).toBe(201);
    expect((await callWithSession(ctx, admin.sessionToken, 'GET', keysUrl(slug))).statusCode).toBe(200);

    const attempts = (token: string) => [
      callWithSession(ctx, token, 'GET', keysUrl(slug)),
      callWithSession(ctx, token, 'POST', keysUrl(slug), { body: { scopes: ['integrations:read'] } }),
      callWithSession(ctx, token, 'DELETE', `${keysUrl(slug)}/${boot.apiKey.id}`),
    ];
    for (const res of await Promise.all(attempts(viewer.sessionToken))) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'forbidden' });
    }
    for (const res of await Promise.all(attempts(stranger.sessionToken))) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'workspace_not_found' });
    }
    for (const missing of [`missing-${newId('ws_').slice(-8)}`, '%00', 'UPPER']) {
      const unknown = await callWithSession(ctx, boot.sessionToken, 'GET', keysUrl(missing));
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual({ error: 'workspace_not_found' });
    }
    expect(await countRows(ctx, 'api_keys', 'workspace_id = $1', [boot.workspace.id])).toBe(2);
    await authenticate(boot.apiKey.key);

    await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${slug}/archive`);
    for (const res of await Promise.all(attempts(boot.sessionToken))) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'workspace_not_found' });
    }
    expect(await countRows(ctx, 'api_keys', 'workspace_id = $1 AND revoked_at IS NOT NULL', [boot.workspace.id])).toBe(0);
  });
});
