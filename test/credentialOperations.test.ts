import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { insertApiKey } from '../management/apiKeys/apiKeyStore.js';
import { advanceTestClock, resetTestClock } from '../shared/clock.js';
import { RedisKeys } from '../shared/redis.js';
import { sha256Hex } from '../shared/secrets.js';
import { apiKeyAuthorityLosses } from './helpers/authority.js';
import { insertConnection, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
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

type Action = 'issue' | 'rotate' | 'revoke';

function mutate(
  key: string,
  connectionId: string,
  action: Action,
  body: unknown,
  idempotencyKey: string = newIdempotencyKey(),
): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', `/v1/connections/${connectionId}/credentials/${action}`, { body, idempotencyKey });
}

function receipt(key: string | null, operationId: string): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'GET', `/v1/credential-operations/${operationId}`);
}

function verify(key: string, connectionId: string, connectionKey: string, ingestToken: string): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', `/v1/connections/${connectionId}/credentials/verify`, { body: { connectionKey, ingestToken } });
}

async function writes(boot: BootstrapResult, connectionId: string) {
  return {
    connection: await readConnectionRow(ctx, connectionId),
    credentials: await countRows(ctx, 'credentials', 'connection_id = $1', [connectionId]),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action LIKE 'credential.%'", [boot.workspace.id]),
  };
}

/** The receipt members every replay and recovery carries, without the one-time token. */
function withoutToken(body: Record<string, unknown>): Record<string, unknown> {
  const { ingestToken: _token, replayed: _r, historical: _h, credentialRecoveryRequired: _c, ...rest } = body;
  return rest;
}

describe('identical retries and idempotency conflicts', () => {
  it('replays an issue with 200, the original receipt and no token', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const key = newIdempotencyKey();
    const first = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
    expect(first.statusCode).toBe(201);
    const before = await writes(boot, connection.connectionId);

    const replay = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['cache-control']).toBe('no-store');
    expect(replay.json()).toEqual({ ...withoutToken(first.json()), replayed: true, historical: false, credentialRecoveryRequired: true });
    expect(replay.body).not.toContain(first.json().ingestToken);
    expect(await writes(boot, connection.connectionId)).toEqual(before);
    // The original token is still the active one: a replay never changes a token.
    expect((await verify(boot.apiKey.key, connection.connectionId, connection.connectionKey, first.json().ingestToken)).statusCode).toBe(
      200,
    );
  });

  it('replays a revoke with credentialRecoveryRequired false', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const issued = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
    const key = newIdempotencyKey();
    const body = { expectedRevision: issued.json().credential.revision };
    const first = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', body, key);
    expect(first.statusCode).toBe(201);
    const replay = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', body, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ ...first.json(), replayed: true, historical: false, credentialRecoveryRequired: false });
  });

  it("marks a replay historical after a later rotation or the connection's deletion, and never recreates anything", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const key = newIdempotencyKey();
    const body = { expectedRevision: connection.revision };
    const first = await mutate(boot.apiKey.key, connection.connectionId, 'issue', body, key);
    const rotated = await mutate(boot.apiKey.key, connection.connectionId, 'rotate', {
      expectedRevision: first.json().credential.revision,
    });
    expect(rotated.statusCode).toBe(201);

    const replay = await mutate(boot.apiKey.key, connection.connectionId, 'issue', body, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toMatchObject({
      operationId: first.json().operationId,
      replayed: true,
      historical: true,
      credentialRecoveryRequired: true,
    });
    expect(replay.json().credential).toEqual(first.json().credential);

    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [connection.connectionId]);
    const before = await writes(boot, connection.connectionId);
    const afterDeletion = await mutate(boot.apiKey.key, connection.connectionId, 'issue', body, key);
    expect(afterDeletion.statusCode).toBe(200);
    expect(afterDeletion.json()).toMatchObject({ operationId: first.json().operationId, historical: true, replayed: true });
    expect(await writes(boot, connection.connectionId)).toEqual(before);
    expect(await countRows(ctx, 'connections', 'integration_id = $1 AND deleted_at IS NULL', [connection.integrationId])).toBe(0);
  });

  it('answers idempotency_conflict for another body, action, connection or key with the same Idempotency-Key', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const second = await insertConnection(ctx, boot);
    const key = newIdempotencyKey();
    const first = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
    expect(first.statusCode).toBe(201);
    const otherKey = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    const before = await writes(boot, connection.connectionId);
    const secondBefore = await readConnectionRow(ctx, second.connectionId);

    const conflicts = [
      mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: first.json().credential.revision }, key),
      mutate(boot.apiKey.key, connection.connectionId, 'rotate', { expectedRevision: first.json().credential.revision }, key),
      mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: connection.revision }, key),
      mutate(boot.apiKey.key, second.connectionId, 'issue', { expectedRevision: connection.revision }, key),
      mutate(boot.apiKey.key, second.connectionId, 'issue', { expectedRevision: second.revision }, key),
      mutate(otherKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key),
    ];
    for (const res of await Promise.all(conflicts)) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'idempotency_conflict' });
    }
    expect(await writes(boot, connection.connectionId)).toEqual(before);
    expect(await readConnectionRow(ctx, second.connectionId)).toEqual(secondBefore);
  });

  it('answers idempotency_conflict when the key was used by Integration creation', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const key = newIdempotencyKey();
    await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox', idempotencyKey: key });
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'idempotency_conflict' });
    expect(await readConnectionRow(ctx, connection.connectionId)).toMatchObject({
      revision: connection.revision,
      credential_status: 'not_issued',
    });
  });
});

describe('stored receipts and audit hold no token', () => {
  it('keeps the token out of operations.receipt and audit metadata', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const issued = (await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision })).json();
    const rotated = (
      await mutate(boot.apiKey.key, connection.connectionId, 'rotate', { expectedRevision: issued.credential.revision })
    ).json();
    for (const token of [issued.ingestToken, rotated.ingestToken]) {
      expect(token).toMatch(/^svc_ing_/);
      const secrets = [token, sha256Hex(token), token.slice('svc_ing_'.length)];
      const stored = await ctx.deps.pool.query('SELECT receipt::text AS text FROM operations WHERE workspace_id = $1', [boot.workspace.id]);
      const audit = await ctx.deps.pool.query('SELECT metadata::text AS text FROM audit_events WHERE workspace_id = $1', [
        boot.workspace.id,
      ]);
      expect(stored.rows).toHaveLength(2);
      expect(audit.rows.length).toBeGreaterThanOrEqual(2);
      for (const row of [...stored.rows, ...audit.rows]) {
        for (const secret of secrets) expect(row.text).not.toContain(secret);
        expect(row.text).not.toContain('ingestToken');
      }
    }
    const stored = await ctx.deps.pool.query('SELECT receipt FROM operations WHERE id = $1', [rotated.operationId]);
    expect(stored.rows[0].receipt).toEqual({
      operationId: rotated.operationId,
      action: 'rotate',
      credential: rotated.credential,
      connectionKey: connection.connectionKey,
    });
  });
});

describe('GET /v1/credential-operations/{operationId}', () => {
  it('returns the receipt to the key that performed it, uncached and credential-free', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const first = (await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision })).json();
    const res = await receipt(boot.apiKey.key, first.operationId);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ ...withoutToken(first), replayed: true, historical: false, credentialRecoveryRequired: true });
    expect(res.body).not.toContain(first.ingestToken);

    const revoke = (
      await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: first.credential.revision })
    ).json();
    expect((await receipt(boot.apiKey.key, revoke.operationId)).json()).toEqual({
      ...revoke,
      replayed: true,
      historical: false,
      credentialRecoveryRequired: false,
    });
    // The revocation changed the revision: the issue receipt is now historical evidence.
    expect((await receipt(boot.apiKey.key, first.operationId)).json()).toMatchObject({ historical: true, credential: first.credential });
  });

  it("survives the connection's deletion", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const first = (await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision })).json();
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [connection.connectionId]);
    const res = await receipt(boot.apiKey.key, first.operationId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      operationId: first.operationId,
      historical: true,
      replayed: true,
      credentialRecoveryRequired: true,
    });
  });

  it('answers operation_not_found to another key, an unknown, malformed or foreign id', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const first = (await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision })).json();
    const sameWorkspaceKey = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    const creation = await createIntegration(ctx, boot.apiKey.key, { mode: 'live' });
    for (const [key, id] of [
      [sameWorkspaceKey.key, first.operationId],
      [other.apiKey.key, first.operationId],
      [boot.apiKey.key, 'credop_01jdq0a7v5t1c8r1n3k2x9m4zq'],
      [boot.apiKey.key, 'credop_bad'],
      [boot.apiKey.key, creation.operationId],
    ] as const) {
      const res = await receipt(key, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'operation_not_found' });
    }
  });

  it('requires integrations:manage', async () => {
    const boot = await bootstrapWorkspace(ctx, { scopes: ['integrations:read', 'integrations:manage'] });
    const connection = await insertConnection(ctx, boot);
    const first = (await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision })).json();
    const readOnly = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:read'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    const res = await receipt(readOnly.key, first.operationId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient_scope' });
    expect((await receipt(null, first.operationId)).statusCode).toBe(401);
  });
});

describe('authority re-checked inside the transaction', () => {
  async function expectNothingWritten(
    boot: BootstrapResult,
    connection: ConnectionFixture,
    res: LightMyRequestResponse,
    status: number,
    code: string,
  ) {
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: code });
    expect(await readConnectionRow(ctx, connection.connectionId)).toEqual({
      revision: connection.revision,
      credential_status: 'not_issued',
      credential_epoch: '0',
    });
    expect(await countRows(ctx, 'credentials', 'connection_id = $1', [connection.connectionId])).toBe(0);
    expect(await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id])).toBe(0);
    expect(await countRows(ctx, 'audit_events', "workspace_id = $1 AND action LIKE 'credential.%'", [boot.workspace.id])).toBe(0);
  }

  for (const [label, lose, status, code] of apiKeyAuthorityLosses('connection_configuration_changed')) {
    it(`rolls back credential, receipt and audit when ${label} during the operation`, async () => {
      const boot = await bootstrapWorkspace(ctx);
      const connection = await insertConnection(ctx, boot);
      const kinds: string[] = [];
      ctx.hooks.beforeAuthorityRecheck = async (kind) => {
        kinds.push(kind);
        await lose(ctx, boot);
      };
      try {
        const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
        expect(kinds).toEqual(['credential.issue']);
        await expectNothingWritten(boot, connection, res, status, code);
      } finally {
        ctx.hooks.beforeAuthorityRecheck = undefined;
      }
    });
  }

  it('keeps the rollback when the authority is restored afterwards', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    ctx.hooks.beforeAuthorityRecheck = async () => {
      await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [boot.workspace.id]);
    };
    try {
      const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
      ctx.hooks.beforeAuthorityRecheck = undefined;
      await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch - 1 WHERE id = $1', [boot.workspace.id]);
      await expectNothingWritten(boot, connection, res, 409, 'connection_configuration_changed');
    } finally {
      ctx.hooks.beforeAuthorityRecheck = undefined;
    }
  });

  it('rejects a key that expired before the request with 401, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const shortLived = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: new Date(Date.now() + 60_000),
      createdBy: 'test',
      now: new Date(),
    });
    try {
      await advanceTestClock(ctx.deps.redis, 120_000);
      const res = await mutate(shortLived.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
      await expectNothingWritten(boot, connection, res, 401, 'unauthenticated');
    } finally {
      await resetTestClock(ctx.deps.redis);
    }
    // The same key works before its expiry (the clock is back to real time).
    const res = await mutate(shortLived.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
    expect(res.statusCode).toBe(201);
  });
});

describe('concurrency', () => {
  it('20 parallel issues with different keys produce exactly one active credential', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }),
      ),
    );
    const created = responses.filter((res) => res.statusCode === 201);
    expect(created).toHaveLength(1);
    for (const res of responses.filter((r) => r.statusCode !== 201)) {
      expect(res.statusCode).toBe(409);
      expect(['credential_already_issued', 'connection_configuration_changed']).toContain(res.json().error);
      expect(res.body).not.toContain('svc_ing_');
    }
    const tokens = responses.map((res) => res.json().ingestToken).filter(Boolean);
    expect(tokens).toHaveLength(1);
    const rows = await ctx.deps.pool.query('SELECT token_hash, status FROM credentials WHERE connection_id = $1', [
      connection.connectionId,
    ]);
    expect(rows.rows).toEqual([{ token_hash: sha256Hex(tokens[0]), status: 'active' }]);
    expect(await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id])).toBe(1);
    expect(await readConnectionRow(ctx, connection.connectionId)).toMatchObject({ credential_status: 'active', credential_epoch: '1' });
  });

  it('20 parallel identical issues with one key produce one token and nineteen replays', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const key = newIdempotencyKey();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key),
      ),
    );
    const created = responses.filter((res) => res.statusCode === 201);
    const replays = responses.filter((res) => res.statusCode === 200);
    expect(created).toHaveLength(1);
    expect(replays).toHaveLength(19);
    expect(created[0].json().ingestToken).toMatch(/^svc_ing_/);
    for (const res of replays) {
      expect(res.json()).not.toHaveProperty('ingestToken');
      expect(res.json()).toMatchObject({ operationId: created[0].json().operationId, replayed: true, credentialRecoveryRequired: true });
    }
    expect(await countRows(ctx, 'credentials', 'connection_id = $1', [connection.connectionId])).toBe(1);
    expect(await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id])).toBe(1);
  });
});

describe('end to end with Integration creation', () => {
  it('rotates the token that creation issued; the created token stops verifying', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const { connectionId } = created.integration;
    const { connectionKey, ingestToken } = created.collectorConfiguration;
    const state = await callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/connections/${connectionId}/credentials`);
    expect(state.json().credential).toMatchObject({
      status: 'active',
      mode: 'sandbox',
      environmentId: created.integration.environmentId,
      revokedAt: null,
    });
    expect((await verify(boot.apiKey.key, connectionId, connectionKey, ingestToken)).statusCode).toBe(200);
    const epochBefore = Number(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connectionId)));

    const rotate = await mutate(boot.apiKey.key, connectionId, 'rotate', { expectedRevision: state.json().credential.revision });
    expect(rotate.statusCode).toBe(201);
    expect(rotate.json()).toMatchObject({ action: 'rotate', connectionKey, credential: { status: 'active' } });
    expect(rotate.json().ingestToken).not.toBe(ingestToken);
    expect(Number(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connectionId)))).toBe(epochBefore + 2);
    expect((await verify(boot.apiKey.key, connectionId, connectionKey, ingestToken)).json()).toEqual({
      error: 'credential_verification_failed',
    });
    expect((await verify(boot.apiKey.key, connectionId, connectionKey, rotate.json().ingestToken)).statusCode).toBe(200);
    // Issuing again on the active credential is refused.
    const issue = await mutate(boot.apiKey.key, connectionId, 'issue', { expectedRevision: rotate.json().credential.revision });
    expect(issue.json()).toEqual({ error: 'credential_already_issued' });
  });
});
