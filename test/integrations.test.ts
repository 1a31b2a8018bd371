import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../shared/ids.js';
import { decryptSecret, sha256Hex } from '../shared/secrets.js';
import { RedisKeys } from '../shared/redis.js';
import { setWritePause } from '../management/maintenance.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { bootstrapWorkspace, callWithKey, countRows, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { createIntegration } from './helpers/integrations.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});
afterEach(() => {
  ctx.hooks.beforeAuthorityRecheck = undefined;
});

const BODY = { mode: 'sandbox', name: 'Orders sync', provider: 'Acme', direction: 'outbound', protocol: 'http-api' } as const;

/** POST /v1/integrations; a fresh Idempotency-Key unless one is given (`null`: no header). */
const post = (key: string | null, body: unknown, idempotencyKey: string | null = newIdempotencyKey()) =>
  callWithKey(ctx, key, 'POST', '/v1/integrations', { body, idempotencyKey: idempotencyKey ?? undefined });

/** A second key of the same workspace (operator bootstrap reuses the user's workspace). */
const secondKey = (boot: BootstrapResult, scopes: string[] | 'all' = 'all') => bootstrapWorkspace(ctx, { email: boot.user.email, scopes });

/** Every row a creation could write for the workspace: all must stay zero after a failure. */
async function writtenRows(workspaceId: string) {
  return {
    integrations: await countRows(ctx, 'integrations', 'workspace_id = $1', [workspaceId]),
    connections: await countRows(ctx, 'connections', 'workspace_id = $1', [workspaceId]),
    credentials: await countRows(ctx, 'credentials', 'connection_id IN (SELECT id FROM connections WHERE workspace_id = $1)', [
      workspaceId,
    ]),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', [workspaceId]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'integration.create'", [workspaceId]),
  };
}
const NOTHING = { integrations: 0, connections: 0, credentials: 0, operations: 0, audit: 0 };

describe('POST /v1/integrations', () => {
  it('creates the Integration, its connection and its first credential, returning the token once', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const res = await post(boot.apiKey.key, BODY);
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    const sandbox = await ctx.deps.pool.query("SELECT id FROM environments WHERE workspace_id = $1 AND category = 'sandbox'", [
      boot.workspace.id,
    ]);
    expect(body).toEqual({
      operationId: expect.stringMatching(/^intop_[0-9a-z]{26}$/),
      replayed: false,
      credentialRecoveryRequired: false,
      integration: {
        id: expect.stringMatching(/^wint_[0-9a-z]{26}$/),
        connectionId: expect.stringMatching(/^int_[0-9a-z]{26}$/),
        mode: 'sandbox',
        environmentId: sandbox.rows[0].id,
      },
      collectorConfiguration: {
        integrationKey: expect.stringMatching(/^svc_int_[0-9a-z]{26}$/),
        connectionKey: expect.stringMatching(/^svc_conn_v1\.[0-9a-z]{26}$/),
        ingestToken: expect.stringMatching(/^svc_ing_[A-Za-z0-9_-]{43}$/),
      },
    });

    const integration = await ctx.deps.pool.query('SELECT * FROM integrations WHERE id = $1', [body.integration.id]);
    expect(integration.rows[0]).toMatchObject({
      workspace_id: boot.workspace.id,
      name: 'Orders sync',
      provider: 'Acme',
      direction: 'outbound',
      protocol: 'http-api',
      integration_key: body.collectorConfiguration.integrationKey,
      deleted_at: null,
    });
    expect(integration.rows[0].revision).toMatch(/^[0-9]+$/);
    const connection = await ctx.deps.pool.query('SELECT * FROM connections WHERE id = $1', [body.integration.connectionId]);
    expect(connection.rows[0]).toMatchObject({
      integration_id: body.integration.id,
      workspace_id: boot.workspace.id,
      environment_id: sandbox.rows[0].id,
      mode: 'sandbox',
      connection_key: body.collectorConfiguration.connectionKey,
      credential_status: 'active',
      credential_epoch: '1',
      active_contract_version_id: null,
      latest_observation_at: null,
    });
    expect(connection.rows[0].revision).not.toBe(integration.rows[0].revision);

    // 00-decisions §4: the token is kept sealed and hashed, never in plaintext.
    const credential = await ctx.deps.pool.query('SELECT * FROM credentials WHERE connection_id = $1', [body.integration.connectionId]);
    expect(credential.rows).toHaveLength(1);
    const token = body.collectorConfiguration.ingestToken as string;
    expect(credential.rows[0]).toMatchObject({ status: 'active', token_hash: sha256Hex(token), epoch: '1' });
    expect(credential.rows[0].token_sealed).not.toContain(token);
    expect(decryptSecret(credential.rows[0].token_sealed, ctx.deps.config.secretEncryptionKey)).toBe(token);

    // The receipt and the audit row hold no token (01: receipts and audit metadata never hold it).
    const operation = await ctx.deps.pool.query('SELECT * FROM operations WHERE id = $1', [body.operationId]);
    expect(operation.rows[0]).toMatchObject({
      kind: 'integration.create',
      api_key_id: boot.apiKey.id,
      status_code: 201,
      integration_id: body.integration.id,
      connection_id: body.integration.connectionId,
      recorded_revision: connection.rows[0].revision,
    });
    expect(JSON.stringify(operation.rows[0].receipt)).not.toContain(token);
    expect(JSON.stringify(operation.rows[0].receipt)).not.toContain(sha256Hex(token));
    expect(JSON.stringify(operation.rows[0].receipt)).not.toContain('svc_ing_');
    const audit = await ctx.deps.pool.query("SELECT * FROM audit_events WHERE workspace_id = $1 AND action = 'integration.create'", [
      boot.workspace.id,
    ]);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({ actor_type: 'api_key', actor_id: boot.apiKey.id, target_id: body.integration.id });
    expect(audit.rows[0].metadata).toMatchObject({
      operationId: body.operationId,
      connectionId: body.integration.connectionId,
      mode: 'sandbox',
    });
    expect(JSON.stringify(audit.rows[0].metadata)).not.toContain('svc_ing_');
    expect(JSON.stringify(audit.rows[0].metadata)).not.toContain(sha256Hex(token));

    // The credential epoch moved before and after COMMIT.
    expect(Number(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, body.integration.connectionId)))).toBe(2);
  });

  it('creates a live connection in the Live environment, with name and provider trimmed', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const name = 'N'.repeat(120);
    const res = await post(boot.apiKey.key, {
      ...BODY,
      mode: 'live',
      name: `  ${name}\t`,
      provider: ' Stripe ',
      direction: 'inbound',
      protocol: 'queue',
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    const live = await ctx.deps.pool.query("SELECT id FROM environments WHERE workspace_id = $1 AND category = 'live'", [
      boot.workspace.id,
    ]);
    expect(body.integration).toMatchObject({ mode: 'live', environmentId: live.rows[0].id });
    const row = await ctx.deps.pool.query('SELECT name, provider, direction, protocol FROM integrations WHERE id = $1', [
      body.integration.id,
    ]);
    expect(row.rows[0]).toEqual({ name, provider: 'Stripe', direction: 'inbound', protocol: 'queue' });
    const connection = await ctx.deps.pool.query('SELECT mode, environment_id FROM connections WHERE id = $1', [
      body.integration.connectionId,
    ]);
    expect(connection.rows[0]).toEqual({ mode: 'live', environment_id: live.rows[0].id });
  });

  it('keeps same-name Integrations independent', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const first = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const second = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    expect(second.integration.id).not.toBe(first.integration.id);
    expect(second.integration.connectionId).not.toBe(first.integration.connectionId);
    expect(second.collectorConfiguration.connectionKey).not.toBe(first.collectorConfiguration.connectionKey);
    expect(second.collectorConfiguration.integrationKey).not.toBe(first.collectorConfiguration.integrationKey);
    expect(second.collectorConfiguration.ingestToken).not.toBe(first.collectorConfiguration.ingestToken);
    expect(await countRows(ctx, 'integrations', 'workspace_id = $1', [boot.workspace.id])).toBe(2);
  });

  it('replays an identical retry without the token and writes nothing more', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const key = newIdempotencyKey();
    const first = await post(boot.apiKey.key, BODY, key);
    expect(first.statusCode).toBe(201);
    const before = await writtenRows(boot.workspace.id);
    // Surrounding whitespace is normalised away, so this is the same request.
    const retry = await post(boot.apiKey.key, { ...BODY, name: ' Orders sync ' }, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['cache-control']).toBe('no-store');
    const original = first.json();
    expect(retry.json()).toEqual({
      operationId: original.operationId,
      replayed: true,
      credentialRecoveryRequired: true,
      integration: original.integration,
      collectorConfiguration: {
        integrationKey: original.collectorConfiguration.integrationKey,
        connectionKey: original.collectorConfiguration.connectionKey,
      },
    });
    expect(retry.body).not.toContain('svc_ing_');
    expect(await writtenRows(boot.workspace.id)).toEqual(before);
    expect(Number(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, original.integration.connectionId)))).toBe(2);
  });

  it('never recreates a deleted connection on retry', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const key = newIdempotencyKey();
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox', idempotencyKey: key });
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [created.integration.connectionId]);
    const retry = await post(boot.apiKey.key, BODY, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.json().integration).toEqual(created.integration);
    expect(await countRows(ctx, 'connections', 'workspace_id = $1 AND deleted_at IS NULL', [boot.workspace.id])).toBe(0);
  });

  it('refuses a changed body, or another key, under the same Idempotency-Key with idempotency_conflict', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const key = newIdempotencyKey();
    expect((await post(boot.apiKey.key, BODY, key)).statusCode).toBe(201);
    const before = await writtenRows(boot.workspace.id);
    for (const changed of [
      { ...BODY, name: 'Other' },
      { ...BODY, mode: 'live' },
      { ...BODY, protocol: 'queue' },
    ]) {
      const res = await post(boot.apiKey.key, changed, key);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'idempotency_conflict' });
    }
    const other = await secondKey(boot);
    const res = await post(other.apiKey.key, BODY, key);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'idempotency_conflict' });
    expect(await writtenRows(boot.workspace.id)).toEqual(before);
  });

  it('requires a well-formed Idempotency-Key (400 idempotency_key_required), writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    for (const key of [null, 'short12', 'has space in it', 'x'.repeat(129), 'ümlaut-key-1']) {
      const res = await post(boot.apiKey.key, BODY, key);
      expect(res.statusCode, String(key)).toBe(400);
      expect(res.json()).toEqual({ error: 'idempotency_key_required' });
    }
    expect((await post(boot.apiKey.key, BODY, 'x'.repeat(128))).statusCode).toBe(201);
    expect((await post(boot.apiKey.key, BODY, '!~abcdef')).statusCode).toBe(201);
    expect(await countRows(ctx, 'integrations', 'workspace_id = $1', [boot.workspace.id])).toBe(2);
  });

  it('answers 400 invalid_integration for every body problem, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { mode: _mode, ...withoutMode } = BODY;
    const { name: _name, ...withoutName } = BODY;
    const { provider: _provider, ...withoutProvider } = BODY;
    const { direction: _direction, ...withoutDirection } = BODY;
    const { protocol: _protocol, ...withoutProtocol } = BODY;
    const bad: unknown[] = [
      withoutMode,
      withoutName,
      withoutProvider,
      withoutDirection,
      withoutProtocol,
      { ...BODY, mode: 'staging' },
      { ...BODY, mode: 'Sandbox' },
      { ...BODY, mode: null },
      { ...BODY, name: '' },
      { ...BODY, name: '   ' },
      { ...BODY, name: 'N'.repeat(121) },
      { ...BODY, name: 42 },
      { ...BODY, provider: '' },
      { ...BODY, provider: ' \n ' },
      { ...BODY, provider: 'P'.repeat(121) },
      { ...BODY, direction: 'both' },
      { ...BODY, protocol: 'grpc' },
      { ...BODY, extra: true },
      { ...BODY, environmentId: 'env_01jx0000000000000000000000' },
      { ...BODY, tenantId: boot.workspace.tenantId },
      { ...BODY, id: 'wint_01jx0000000000000000000000' },
      { ...BODY, integrationId: 'wint_01jx0000000000000000000000' },
      { ...BODY, workspaceId: boot.workspace.id },
      [BODY],
      null,
      7,
    ];
    for (const body of bad) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/v1/integrations',
        payload: JSON.stringify(body),
        headers: { authorization: `Bearer ${boot.apiKey.key}`, 'idempotency-key': newIdempotencyKey(), 'content-type': 'application/json' },
      });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_integration' });
    }
    const empty = await ctx.app.inject({
      method: 'POST',
      url: '/v1/integrations',
      headers: { authorization: `Bearer ${boot.apiKey.key}`, 'idempotency-key': newIdempotencyKey() },
    });
    expect(empty.statusCode).toBe(400);
    expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
  });

  it('authenticates before anything else: 401 without a valid key, 403 without integrations:manage', async () => {
    const boot = await bootstrapWorkspace(ctx, { scopes: ['integrations:read', 'contracts:write'] });
    for (const key of [null, 'svc_api_nope', `${boot.apiKey.key}x`]) {
      const res = await post(key, { bad: true }, null);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe('unauthenticated');
    }
    const session = await callWithKey(ctx, null, 'POST', '/v1/integrations', {
      body: BODY,
      idempotencyKey: newIdempotencyKey(),
      headers: { cookie: `session=${boot.sessionToken}` },
    });
    expect(session.statusCode).toBe(401);
    const res = await post(boot.apiKey.key, { bad: true }, null);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient_scope' });
    expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
  });

  it('refuses a legacy workspace with 409 workspace_modes_unavailable, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx, { legacy: true });
    const res = await post(boot.apiKey.key, BODY);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'workspace_modes_unavailable' });
    expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
  });

  it('refuses a canonical workspace with an incomplete topology, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await ctx.deps.pool.query(
      "INSERT INTO environments (id, workspace_id, name, slug, category, mode, created_at) VALUES ($1, $2, 'Staging', 'staging', 'staging', 'sandbox', now())",
      [newId('env_'), boot.workspace.id],
    );
    const res = await post(boot.apiKey.key, BODY);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'workspace_modes_unavailable' });
    expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
  });

  it('answers 503 mode_cutover_write_paused with Retry-After: 1 during the maintenance pause, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    await setWritePause(ctx.deps.redis, true);
    try {
      const res = await post(boot.apiKey.key, BODY);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toEqual({ error: 'mode_cutover_write_paused' });
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
  });

  describe('authority lost during creation rolls everything back', () => {
    it('a key revoked before commit → 403 insufficient_scope', async () => {
      const boot = await bootstrapWorkspace(ctx);
      ctx.hooks.beforeAuthorityRecheck = async (kind) => {
        expect(kind).toBe('integration.create');
        await ctx.deps.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [boot.apiKey.id]);
      };
      const res = await post(boot.apiKey.key, BODY);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'insufficient_scope' });
      expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
    });

    it('a key that expires before commit → 403 insufficient_scope', async () => {
      const boot = await bootstrapWorkspace(ctx);
      ctx.hooks.beforeAuthorityRecheck = async () => {
        await ctx.deps.pool.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [boot.apiKey.id]);
      };
      const res = await post(boot.apiKey.key, BODY);
      expect(res.statusCode).toBe(403);
      expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
    });

    it('an authorization epoch bump → 409 workspace_authorization_changed, even when restored', async () => {
      const boot = await bootstrapWorkspace(ctx);
      ctx.hooks.beforeAuthorityRecheck = async () => {
        await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [boot.workspace.id]);
      };
      const res = await post(boot.apiKey.key, BODY);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'workspace_authorization_changed' });
      expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
    });

    it('archival during the request → 409 workspace_unavailable; the key then fails with 401', async () => {
      const boot = await bootstrapWorkspace(ctx);
      ctx.hooks.beforeAuthorityRecheck = async () => {
        await ctx.deps.pool.query("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1", [boot.workspace.id]);
      };
      const res = await post(boot.apiKey.key, BODY);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'workspace_unavailable' });
      expect(await writtenRows(boot.workspace.id)).toEqual(NOTHING);
      ctx.hooks.beforeAuthorityRecheck = undefined;
      expect((await post(boot.apiKey.key, BODY)).statusCode).toBe(401);
    });
  });

  it('20 parallel identical creations with one Idempotency-Key create exactly one Integration', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const key = newIdempotencyKey();
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(boot.apiKey.key, BODY, key)));
    const statuses = responses.map((res) => res.statusCode).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(19);
    const created = responses.find((res) => res.statusCode === 201)!.json();
    for (const res of responses.filter((r) => r.statusCode === 200)) {
      const body = res.json();
      expect(body.replayed).toBe(true);
      expect(body.operationId).toBe(created.operationId);
      expect(body.integration).toEqual(created.integration);
      expect(body.collectorConfiguration.connectionKey).toBe(created.collectorConfiguration.connectionKey);
      expect(body.collectorConfiguration.ingestToken).toBeUndefined();
    }
    expect(await writtenRows(boot.workspace.id)).toEqual({ integrations: 1, connections: 1, credentials: 1, operations: 1, audit: 1 });
  });
});

describe('GET /v1/integration-operations/{operationId}', () => {
  const read = (key: string, operationId: string) => callWithKey(ctx, key, 'GET', `/v1/integration-operations/${operationId}`);

  it('returns the credential-free replay shape to the key that created it', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'live' });
    const res = await read(boot.apiKey.key, created.operationId);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      operationId: created.operationId,
      replayed: true,
      credentialRecoveryRequired: true,
      integration: created.integration,
      collectorConfiguration: {
        integrationKey: created.collectorConfiguration.integrationKey,
        connectionKey: created.collectorConfiguration.connectionKey,
      },
    });
    expect(res.body).not.toContain('svc_ing_');
    // The receipt survives connection deletion.
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [created.integration.connectionId]);
    expect((await read(boot.apiKey.key, created.operationId)).json().integration).toEqual(created.integration);
  });

  it('answers 404 operation_not_found for another key, another workspace, unknown and malformed ids', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const sameWorkspace = await secondKey(boot);
    const stranger = await bootstrapWorkspace(ctx);
    const cases: [string, string][] = [
      [sameWorkspace.apiKey.key, created.operationId],
      [stranger.apiKey.key, created.operationId],
      [boot.apiKey.key, 'intop_00000000000000000000000000'],
      [boot.apiKey.key, 'intop_x'],
      [boot.apiKey.key, created.integration.id],
      [boot.apiKey.key, created.operationId.toUpperCase()],
      [boot.apiKey.key, encodeURIComponent("intop_' OR 1=1 --")],
    ];
    for (const [key, id] of cases) {
      const res = await read(key, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'operation_not_found' });
    }
  });

  it('does not serve another operation kind under this route', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const id = newId('intop_');
    await ctx.deps.pool.query(
      `INSERT INTO operations (id, kind, workspace_id, api_key_id, idempotency_key, request_fingerprint, status_code, receipt, created_at)
       VALUES ($1, 'credential.issue', $2, $3, $4, 'sha256:x', 201, '{}', now())`,
      [id, boot.workspace.id, boot.apiKey.id, newIdempotencyKey()],
    );
    expect((await read(boot.apiKey.key, id)).statusCode).toBe(404);
  });

  it('requires integrations:manage (403) and a valid key (401)', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const reader = await secondKey(boot, ['integrations:read']);
    const res = await read(reader.apiKey.key, created.operationId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient_scope' });
    expect((await callWithKey(ctx, null, 'GET', `/v1/integration-operations/${created.operationId}`)).statusCode).toBe(401);
  });
});
