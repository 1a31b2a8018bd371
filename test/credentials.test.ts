import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { setWritePause } from '../management/maintenance.js';
import { RedisKeys } from '../shared/redis.js';
import { decryptSecret, sha256Hex } from '../shared/secrets.js';
import { insertConnection, insertConnections, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  countRows,
  createTestContext,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

type Action = 'issue' | 'rotate' | 'revoke';

function mutate(
  key: string | null,
  connectionId: string,
  action: Action,
  body: unknown,
  idempotencyKey: string | null = newIdempotencyKey(),
): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', `/v1/connections/${connectionId}/credentials/${action}`, {
    body,
    idempotencyKey: idempotencyKey ?? undefined,
  });
}

function status(key: string | null, connectionId: string): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'GET', `/v1/connections/${connectionId}/credentials`);
}

function verify(key: string, connectionId: string, body: unknown): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', `/v1/connections/${connectionId}/credentials/verify`, { body });
}

/** Everything a credential request could write, to prove that a refused one wrote nothing. */
async function snapshot(boot: BootstrapResult, connectionId: string) {
  return {
    connection: await readConnectionRow(ctx, connectionId),
    credentials: await ctx.deps.pool
      .query('SELECT id, status, ended_at FROM credentials WHERE connection_id = $1 ORDER BY id', [connectionId])
      .then((r) => r.rows),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action LIKE 'credential.%'", [boot.workspace.id]),
    epoch: await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connectionId)),
  };
}

async function issued(boot: BootstrapResult, connection: ConnectionFixture): Promise<{ token: string; revision: string }> {
  const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
  expect(res.statusCode).toBe(201);
  return { token: res.json().ingestToken, revision: res.json().credential.revision };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('GET /v1/connections/{id}/credentials', () => {
  it('returns the credential state of a not_issued connection, uncached', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot, 'live');
    const res = await status(boot.apiKey.key, connection.connectionId);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      credential: {
        connectionId: connection.connectionId,
        environmentId: connection.environmentId,
        mode: 'live',
        revision: connection.revision,
        status: 'not_issued',
        issuedAt: null,
        revokedAt: null,
      },
    });
  });

  it('reports issuedAt for an active credential and revokedAt after revocation, never a token', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const { token, revision } = await issued(boot, connection);
    const active = (await status(boot.apiKey.key, connection.connectionId)).json().credential;
    expect(active).toMatchObject({ status: 'active', revision, revokedAt: null });
    expect(active.issuedAt).toMatch(ISO_MS);
    const revoke = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: revision });
    expect(revoke.statusCode).toBe(201);
    const res = await status(boot.apiKey.key, connection.connectionId);
    expect(res.json().credential).toMatchObject({ status: 'revoked', issuedAt: active.issuedAt });
    expect(res.json().credential.revokedAt).toMatch(ISO_MS);
    expect(res.body).not.toContain(token);
    expect(res.body).not.toContain(sha256Hex(token));
  });

  it('requires a current key with integrations:manage', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const readOnly = await bootstrapWorkspace(ctx, { scopes: ['integrations:read'] });
    const connection = await insertConnection(ctx, boot);
    expect((await status(null, connection.connectionId)).statusCode).toBe(401);
    expect((await status('svc_api_nope', connection.connectionId)).json()).toEqual({ error: 'unauthenticated' });
    const forbidden = await status(readOnly.apiKey.key, connection.connectionId);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ error: 'insufficient_scope' });
  });

  it('answers connection_not_found for wint_, malformed, foreign and deleted ids', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const foreign = await insertConnection(ctx, other);
    const deleted = await insertConnection(ctx, boot);
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [deleted.connectionId]);
    for (const id of [connection.integrationId, 'int_123', 'not-an-id', foreign.connectionId, deleted.connectionId]) {
      const res = await status(boot.apiKey.key, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'connection_not_found' });
    }
  });

  it('answers workspace_modes_unavailable in a legacy workspace and 401 once archived', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const res = await status(legacy.apiKey.key, 'int_01jdq0a7v5t1c8r1n3k2x9m4zq');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'workspace_modes_unavailable' });

    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    await ctx.deps.pool.query("UPDATE workspaces SET status = 'archived' WHERE id = $1", [boot.workspace.id]);
    expect((await status(boot.apiKey.key, connection.connectionId)).statusCode).toBe(401);
  });
});

describe('POST /v1/connections/{id}/credentials/issue', () => {
  it('issues an active token once, stored sealed and hashed, with a new revision and epoch', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'action',
      'connectionKey',
      'credential',
      'credentialRecoveryRequired',
      'historical',
      'ingestToken',
      'operationId',
      'replayed',
    ]);
    expect(body).toMatchObject({
      action: 'issue',
      connectionKey: connection.connectionKey,
      replayed: false,
      historical: false,
      credentialRecoveryRequired: false,
    });
    expect(body.operationId).toMatch(/^credop_[0-9a-z]{26}$/);
    expect(body.ingestToken).toMatch(/^svc_ing_[A-Za-z0-9_-]{43}$/);
    expect(body.credential).toMatchObject({
      connectionId: connection.connectionId,
      environmentId: connection.environmentId,
      mode: 'sandbox',
      status: 'active',
      revokedAt: null,
    });
    expect(body.credential.revision).toMatch(/^\d+$/);
    expect(BigInt(body.credential.revision)).toBeGreaterThan(BigInt(connection.revision));

    const row = await readConnectionRow(ctx, connection.connectionId);
    expect(row).toEqual({ revision: body.credential.revision, credential_status: 'active', credential_epoch: '1' });
    const { rows } = await ctx.deps.pool.query('SELECT token_hash, token_sealed, status, epoch FROM credentials WHERE connection_id = $1', [
      connection.connectionId,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ token_hash: sha256Hex(body.ingestToken), status: 'active', epoch: '1' });
    expect(rows[0].token_sealed).not.toContain(body.ingestToken);
    expect(decryptSecret(rows[0].token_sealed, ctx.deps.config.secretEncryptionKey)).toBe(body.ingestToken);
    // Bumped before COMMIT and again after it.
    expect(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connection.connectionId))).toBe('2');

    const operation = await ctx.deps.pool.query(
      'SELECT kind, recorded_revision, connection_id, integration_id, status_code FROM operations WHERE id = $1',
      [body.operationId],
    );
    expect(operation.rows[0]).toEqual({
      kind: 'credential.issue',
      recorded_revision: body.credential.revision,
      connection_id: connection.connectionId,
      integration_id: connection.integrationId,
      status_code: 201,
    });
    expect(
      await countRows(ctx, 'audit_events', "action = 'credential.issue' AND target_id = $1 AND actor_id = $2", [
        connection.connectionId,
        boot.apiKey.id,
      ]),
    ).toBe(1);
  });

  it('refuses an active credential with credential_already_issued and writes nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const { revision } = await issued(boot, connection);
    const before = await snapshot(boot, connection.connectionId);
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: revision });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'credential_already_issued' });
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);
  });

  it('refuses a stale expectedRevision with connection_configuration_changed and writes nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const before = await snapshot(boot, connection.connectionId);
    for (const expectedRevision of [String(BigInt(connection.revision) - 1n), '', 'abc']) {
      const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'connection_configuration_changed' });
    }
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);
  });

  it('rejects unknown fields, tenant, mode and a missing or non-string revision with invalid_credential_request', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const before = await snapshot(boot, connection.connectionId);
    const bodies: unknown[] = [
      { expectedRevision: connection.revision, extra: 1 },
      { expectedRevision: connection.revision, tenantId: boot.workspace.tenantId },
      { expectedRevision: connection.revision, mode: 'live' },
      { expectedRevision: connection.revision, environmentId: connection.environmentId },
      {},
      { expectedRevision: Number(connection.revision) },
      { expectedRevision: null },
      [connection.revision],
      undefined,
    ];
    for (const body of bodies) {
      const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_credential_request' });
    }
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);
  });

  it('requires a well-formed Idempotency-Key', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const before = await snapshot(boot, connection.connectionId);
    for (const key of [null, 'short7!', 'has space in it', 'x'.repeat(129), 'tab\there-long']) {
      const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
      expect(res.statusCode, String(key)).toBe(400);
      expect(res.json()).toEqual({ error: 'idempotency_key_required' });
    }
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);
    const longest = await mutate(
      boot.apiKey.key,
      connection.connectionId,
      'issue',
      { expectedRevision: connection.revision },
      '~'.repeat(128),
    );
    expect(longest.statusCode).toBe(201);
  });

  it('checks authentication and scope before the body, and hides foreign, deleted and wint_ ids', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const readOnly = await bootstrapWorkspace(ctx, { scopes: ['integrations:read', 'contracts:write'] });
    const connection = await insertConnection(ctx, boot);
    const foreign = await insertConnection(ctx, other);
    const deleted = await insertConnection(ctx, boot);
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [deleted.connectionId]);

    expect((await mutate(null, connection.connectionId, 'issue', { bogus: true })).statusCode).toBe(401);
    const scoped = await mutate(readOnly.apiKey.key, connection.connectionId, 'issue', { bogus: true });
    expect(scoped.statusCode).toBe(403);
    expect(scoped.json()).toEqual({ error: 'insufficient_scope' });

    for (const [id, expectedRevision] of [
      [foreign.connectionId, foreign.revision],
      [deleted.connectionId, deleted.revision],
      [connection.integrationId, connection.revision],
      ['int_bad', connection.revision],
    ]) {
      const res = await mutate(boot.apiKey.key, id, 'issue', { expectedRevision });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'connection_not_found' });
    }
    expect(await readConnectionRow(ctx, foreign.connectionId)).toMatchObject({
      revision: foreign.revision,
      credential_status: 'not_issued',
    });
    expect(await readConnectionRow(ctx, deleted.connectionId)).toMatchObject({
      revision: deleted.revision,
      credential_status: 'not_issued',
    });
    expect(await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id])).toBe(0);
    expect(await countRows(ctx, 'credentials', 'connection_id = ANY($1)', [[foreign.connectionId, deleted.connectionId]])).toBe(0);
  });

  it('answers workspace_modes_unavailable for a legacy workspace', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    for (const action of ['issue', 'rotate', 'revoke'] as const) {
      const res = await mutate(legacy.apiKey.key, 'int_01jdq0a7v5t1c8r1n3k2x9m4zq', action, { expectedRevision: '1' });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: 'workspace_modes_unavailable' });
    }
    expect(await countRows(ctx, 'operations', 'workspace_id = $1', [legacy.workspace.id])).toBe(0);
  });

  it('returns 503 mode_cutover_write_paused with Retry-After while writes are paused, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const before = await snapshot(boot, connection.connectionId);
    const key = newIdempotencyKey();
    try {
      await setWritePause(ctx.deps.redis, true);
      const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toEqual({ error: 'mode_cutover_write_paused' });
      expect(await snapshot(boot, connection.connectionId)).toEqual(before);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    // The client retries the same request with the same key once the pause ends.
    const retry = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: connection.revision }, key);
    expect(retry.statusCode).toBe(201);
  });

  it('re-issues a revoked credential with a new token', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const first = await issued(boot, connection);
    const revoke = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: first.revision });
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'issue', { expectedRevision: revoke.json().credential.revision });
    expect(res.statusCode).toBe(201);
    expect(res.json().credential).toMatchObject({ status: 'active', revokedAt: null });
    expect(res.json().ingestToken).not.toBe(first.token);
    const rows = await ctx.deps.pool.query('SELECT status FROM credentials WHERE connection_id = $1 ORDER BY issued_at, id', [
      connection.connectionId,
    ]);
    expect(rows.rows.map((r) => r.status)).toEqual(['revoked', 'active']);
    expect(
      (await verify(boot.apiKey.key, connection.connectionId, { connectionKey: connection.connectionKey, ingestToken: first.token }))
        .statusCode,
    ).toBe(409);
    expect(
      (
        await verify(boot.apiKey.key, connection.connectionId, {
          connectionKey: connection.connectionKey,
          ingestToken: res.json().ingestToken,
        })
      ).statusCode,
    ).toBe(200);
  });
});

describe('POST /v1/connections/{id}/credentials/rotate', () => {
  it('replaces the active token: the old one stops working at once', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const first = await issued(boot, connection);
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'rotate', { expectedRevision: first.revision });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      action: 'rotate',
      replayed: false,
      historical: false,
      credentialRecoveryRequired: false,
      connectionKey: connection.connectionKey,
    });
    expect(body.ingestToken).toMatch(/^svc_ing_/);
    expect(body.ingestToken).not.toBe(first.token);
    expect(body.credential.status).toBe('active');
    expect(body.credential.revision).not.toBe(first.revision);

    const rows = await ctx.deps.pool.query(
      'SELECT token_hash, status, ended_at, epoch FROM credentials WHERE connection_id = $1 ORDER BY epoch',
      [connection.connectionId],
    );
    expect(rows.rows.map((r) => [r.token_hash, r.status, r.epoch])).toEqual([
      [sha256Hex(first.token), 'rotated', '1'],
      [sha256Hex(body.ingestToken), 'active', '2'],
    ]);
    expect(rows.rows[0].ended_at).not.toBeNull();
    expect(await readConnectionRow(ctx, connection.connectionId)).toEqual({
      revision: body.credential.revision,
      credential_status: 'active',
      credential_epoch: '2',
    });
    expect(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connection.connectionId))).toBe('4');

    const old = await verify(boot.apiKey.key, connection.connectionId, {
      connectionKey: connection.connectionKey,
      ingestToken: first.token,
    });
    expect(old.statusCode).toBe(409);
    expect(old.json()).toEqual({ error: 'credential_verification_failed' });
    expect(
      (await verify(boot.apiKey.key, connection.connectionId, { connectionKey: connection.connectionKey, ingestToken: body.ingestToken }))
        .statusCode,
    ).toBe(200);
  });

  it('refuses a not_issued or revoked credential with credential_not_issued, writing nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const before = await snapshot(boot, connection.connectionId);
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'rotate', { expectedRevision: connection.revision });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'credential_not_issued' });
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);

    const first = await issued(boot, connection);
    const revoked = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: first.revision });
    const afterRevoke = await snapshot(boot, connection.connectionId);
    const again = await mutate(boot.apiKey.key, connection.connectionId, 'rotate', {
      expectedRevision: revoked.json().credential.revision,
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: 'credential_not_issued' });
    expect(await snapshot(boot, connection.connectionId)).toEqual(afterRevoke);
  });

  it('leaves the other mode connection untouched', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    const liveToken = await issued(boot, live);
    const sandboxToken = await issued(boot, sandbox);
    const liveBefore = await snapshot(boot, live.connectionId);
    const liveState = (await status(boot.apiKey.key, live.connectionId)).json();

    const rotate = await mutate(boot.apiKey.key, sandbox.connectionId, 'rotate', { expectedRevision: sandboxToken.revision });
    expect(rotate.statusCode).toBe(201);
    const liveAfter = await snapshot(boot, live.connectionId);
    expect({ ...liveAfter, operations: 0, audit: 0 }).toEqual({ ...liveBefore, operations: 0, audit: 0 });
    expect((await status(boot.apiKey.key, live.connectionId)).json()).toEqual(liveState);
    expect(
      (await verify(boot.apiKey.key, live.connectionId, { connectionKey: live.connectionKey, ingestToken: liveToken.token })).statusCode,
    ).toBe(200);
    // A token of one mode never verifies for the other.
    expect(
      (await verify(boot.apiKey.key, live.connectionId, { connectionKey: live.connectionKey, ingestToken: rotate.json().ingestToken }))
        .statusCode,
    ).toBe(409);
  });
});

describe('POST /v1/connections/{id}/credentials/revoke', () => {
  it('revokes the active credential without returning a token', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const first = await issued(boot, connection);
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: first.revision });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).not.toHaveProperty('ingestToken');
    expect(body).toMatchObject({ action: 'revoke', replayed: false, historical: false, credentialRecoveryRequired: false });
    expect(body.credential.status).toBe('revoked');
    expect(body.credential.revokedAt).toMatch(ISO_MS);
    expect(body.credential.revision).not.toBe(first.revision);
    expect(await readConnectionRow(ctx, connection.connectionId)).toEqual({
      revision: body.credential.revision,
      credential_status: 'revoked',
      credential_epoch: '2',
    });
    const rows = await ctx.deps.pool.query('SELECT status FROM credentials WHERE connection_id = $1', [connection.connectionId]);
    expect(rows.rows).toEqual([{ status: 'revoked' }]);
    const check = await verify(boot.apiKey.key, connection.connectionId, {
      connectionKey: connection.connectionKey,
      ingestToken: first.token,
    });
    expect(check.statusCode).toBe(409);
    expect(check.json()).toEqual({ error: 'credential_verification_failed' });
  });

  it('records an unchanged receipt for a not_issued or already revoked credential', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const res = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: connection.revision });
    expect(res.statusCode).toBe(201);
    expect(res.json().credential).toEqual({
      connectionId: connection.connectionId,
      environmentId: connection.environmentId,
      mode: 'sandbox',
      revision: connection.revision,
      status: 'not_issued',
      issuedAt: null,
      revokedAt: null,
    });
    expect(await readConnectionRow(ctx, connection.connectionId)).toEqual({
      revision: connection.revision,
      credential_status: 'not_issued',
      credential_epoch: '0',
    });
    expect(await ctx.deps.redis.get(RedisKeys.credentialEpoch(boot.account.id, connection.connectionId))).toBeNull();
    const stored = await ctx.deps.pool.query('SELECT recorded_revision FROM operations WHERE id = $1', [res.json().operationId]);
    expect(stored.rows[0].recorded_revision).toBe(connection.revision);

    const first = await issued(boot, connection);
    const revoked = (await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: first.revision })).json();
    const before = await snapshot(boot, connection.connectionId);
    const again = await mutate(boot.apiKey.key, connection.connectionId, 'revoke', { expectedRevision: revoked.credential.revision });
    expect(again.statusCode).toBe(201);
    expect(again.json().credential).toEqual(revoked.credential);
    const after = await snapshot(boot, connection.connectionId);
    expect(after).toEqual({ ...before, operations: before.operations + 1, audit: before.audit + 1 });
  });
});

describe('POST /v1/connections/{id}/credentials/verify', () => {
  it('verifies the active pair and writes nothing, even while writes are paused', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const { token } = await issued(boot, connection);
    const before = await snapshot(boot, connection.connectionId);
    const allAudit = await countRows(ctx, 'audit_events', 'workspace_id = $1', [boot.workspace.id]);
    try {
      await setWritePause(ctx.deps.redis, true);
      const res = await verify(boot.apiKey.key, connection.connectionId, { connectionKey: connection.connectionKey, ingestToken: token });
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({
        status: 'connection_verified',
        credential: (await status(boot.apiKey.key, connection.connectionId)).json().credential,
        applicationVerified: false,
      });
      expect(res.body).not.toContain(token);
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);
    expect(await countRows(ctx, 'audit_events', 'workspace_id = $1', [boot.workspace.id])).toBe(allAudit);
  });

  it("fails a mismatched key or token, a not_issued credential and another connection's pair", async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    const { token } = await issued(boot, sandbox);
    const cases = [
      [sandbox.connectionId, { connectionKey: live.connectionKey, ingestToken: token }],
      [sandbox.connectionId, { connectionKey: sandbox.connectionKey, ingestToken: token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A') }],
      [sandbox.connectionId, { connectionKey: sandbox.connectionKey, ingestToken: '' }],
      [live.connectionId, { connectionKey: live.connectionKey, ingestToken: token }],
      [live.connectionId, { connectionKey: sandbox.connectionKey, ingestToken: token }],
    ] as const;
    for (const [id, body] of cases) {
      const res = await verify(boot.apiKey.key, id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(409);
      expect(res.json()).toEqual({ error: 'credential_verification_failed' });
    }
  });

  it('rejects any body other than exactly connectionKey and ingestToken', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const { token } = await issued(boot, connection);
    for (const body of [
      { connectionKey: connection.connectionKey },
      { ingestToken: token },
      { connectionKey: connection.connectionKey, ingestToken: token, mode: 'sandbox' },
      { connectionKey: connection.connectionKey, ingestToken: 42 },
      undefined,
    ]) {
      const res = await verify(boot.apiKey.key, connection.connectionId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_credential_request' });
    }
  });

  it('requires the manage scope and hides foreign connections', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const readOnly = await bootstrapWorkspace(ctx, { scopes: ['integrations:read'] });
    const foreign = await insertConnection(ctx, other);
    const { token } = await issued(other, foreign);
    const pair = { connectionKey: foreign.connectionKey, ingestToken: token };
    expect((await verify(readOnly.apiKey.key, foreign.connectionId, pair)).statusCode).toBe(403);
    const res = await verify(boot.apiKey.key, foreign.connectionId, pair);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'connection_not_found' });
    expect((await verify(boot.apiKey.key, foreign.integrationId, pair)).statusCode).toBe(404);
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    expect((await verify(legacy.apiKey.key, foreign.connectionId, pair)).json()).toEqual({ error: 'workspace_modes_unavailable' });
  });
});

describe('legacy browser credential mutation routes', () => {
  const legacyPath = (slug: string, id: string, action: Action) => `/workspaces/${slug}/integrations/${id}/credentials/${action}`;

  it('refuses canonical connections with canonical_credential_required and changes nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const { revision } = await issued(boot, connection);
    const before = await snapshot(boot, connection.connectionId);
    for (const action of ['issue', 'rotate', 'revoke'] as const) {
      const res = await callWithSession(ctx, boot.sessionToken, 'POST', legacyPath(boot.workspace.slug, connection.connectionId, action), {
        body: { expectedRevision: revision },
        idempotencyKey: newIdempotencyKey(),
      });
      expect(res.statusCode, action).toBe(409);
      expect(res.json()).toEqual({ error: 'canonical_credential_required' });
    }
    expect(await snapshot(boot, connection.connectionId)).toEqual(before);
  });

  it('answers 404 for unknown or foreign workspaces and connections, 401 without a session', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const connection = await insertConnection(ctx, boot);
    const foreign = await insertConnection(ctx, other);
    const cases = [
      [legacyPath('no-such-workspace-x', connection.connectionId, 'rotate'), 'workspace_not_found'],
      [legacyPath(other.workspace.slug, foreign.connectionId, 'rotate'), 'workspace_not_found'],
      [legacyPath(boot.workspace.slug, foreign.connectionId, 'rotate'), 'connection_not_found'],
      [legacyPath(boot.workspace.slug, connection.integrationId, 'issue'), 'connection_not_found'],
      [legacyPath(boot.workspace.slug, 'int_nope', 'revoke'), 'connection_not_found'],
    ] as const;
    for (const [url, code] of cases) {
      const res = await callWithSession(ctx, boot.sessionToken, 'POST', url, { body: {} });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ error: code });
    }
    expect(
      (await callWithSession(ctx, null, 'POST', legacyPath(boot.workspace.slug, connection.connectionId, 'issue'), { body: {} }))
        .statusCode,
    ).toBe(401);
    // A viewer of the workspace may not manage it: the same 404 as a missing workspace.
    await ctx.deps.pool.query("UPDATE workspace_members SET role = 'viewer' WHERE workspace_id = $1 AND user_id = $2", [
      boot.workspace.id,
      boot.user.id,
    ]);
    const viewer = await callWithSession(
      ctx,
      boot.sessionToken,
      'POST',
      legacyPath(boot.workspace.slug, connection.connectionId, 'issue'),
      { body: {} },
    );
    expect(viewer.statusCode).toBe(404);
    expect(viewer.json()).toEqual({ error: 'workspace_not_found' });
    expect(await readConnectionRow(ctx, connection.connectionId)).toMatchObject({
      revision: connection.revision,
      credential_status: 'not_issued',
    });
  });
});
