import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findConnectionForWorkspace } from '../management/connections/connectionStore.js';
import { sha256Hex } from '../shared/secrets.js';
import { bootstrapWorkspace, callWithKey, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration, insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx.close();
});

const readConnection = (key: string | null, id: string) => callWithKey(ctx, key, 'GET', `/v1/connections/${id}`);

async function expectNotFound(key: string, id: string) {
  const res = await readConnection(key, id);
  expect(res.statusCode, id).toBe(404);
  expect(res.json()).toEqual({ error: 'connection_not_found' });
}

describe('GET /v1/connections/{connectionId}', () => {
  it('returns the connection with its Integration fields and exact environment, uncached, without key material', async () => {
    const boot = await bootstrapWorkspace(ctx, { scopes: ['integrations:read', 'integrations:manage'] });
    const created = await createIntegration(ctx, boot.apiKey.key, {
      mode: 'live',
      name: 'Refunds',
      provider: 'Adyen',
      direction: 'inbound',
      protocol: 'http-webhook',
    });
    const res = await readConnection(boot.apiKey.key, created.integration.connectionId);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const row = await ctx.deps.pool.query('SELECT revision FROM connections WHERE id = $1', [created.integration.connectionId]);
    expect(res.json()).toEqual({
      id: created.integration.connectionId,
      workspaceIntegrationId: created.integration.id,
      name: 'Refunds',
      provider: 'Adyen',
      direction: 'inbound',
      protocol: 'http-webhook',
      environment: { id: created.integration.environmentId, category: 'live', mode: 'live' },
      revision: row.rows[0].revision,
      credentialStatus: 'active',
      activeContractVersionId: null,
      latestObservationAt: null,
      openIncidentCount: 0,
      observationState: 'waiting_for_observation',
    });
    const token = created.collectorConfiguration.ingestToken;
    for (const secret of [token, sha256Hex(token), 'svc_ing_', created.collectorConfiguration.integrationKey])
      expect(res.body).not.toContain(secret);
  });

  it('reflects the stored revision, credential status and active contract', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    await ctx.deps.pool.query(
      "UPDATE connections SET revision = nextval('revision_seq')::text, credential_status = 'revoked', active_contract_version_id = 'cv_01jx0000000000000000000000' WHERE id = $1",
      [created.integration.connectionId],
    );
    const row = await ctx.deps.pool.query('SELECT revision FROM connections WHERE id = $1', [created.integration.connectionId]);
    const body = (await readConnection(boot.apiKey.key, created.integration.connectionId)).json();
    expect(body).toMatchObject({
      revision: row.rows[0].revision,
      credentialStatus: 'revoked',
      activeContractVersionId: 'cv_01jx0000000000000000000000',
    });
  });

  it('reads a legacy connection with its exact environment id and classified mode', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id, 'Legacy feed');
    const staging = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'staging' });
    const res = await readConnection(legacy.apiKey.key, staging.connectionId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: staging.connectionId,
      workspaceIntegrationId: integrationId,
      name: 'Legacy feed',
      environment: { id: staging.environmentId, category: 'staging', mode: 'sandbox' },
      credentialStatus: 'not_issued',
    });
  });

  it('answers 404 connection_not_found for wint_ ids, malformed, unknown, foreign and deleted connections', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const stranger = await bootstrapWorkspace(ctx);
    const own = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const foreign = await createIntegration(ctx, stranger.apiKey.key, { mode: 'sandbox' });
    for (const id of [
      own.integration.id,
      foreign.integration.connectionId,
      'int_00000000000000000000000000',
      'int_x',
      own.integration.connectionId.toUpperCase(),
      own.collectorConfiguration.connectionKey,
      'abc',
      encodeURIComponent("int_' or 1=1--"),
    ]) {
      await expectNotFound(boot.apiKey.key, id);
    }
    // The stranger reads their own connection but not ours.
    expect((await readConnection(stranger.apiKey.key, foreign.integration.connectionId)).statusCode).toBe(200);
    await expectNotFound(stranger.apiKey.key, own.integration.connectionId);

    const deleted = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [deleted.integration.connectionId]);
    await expectNotFound(boot.apiKey.key, deleted.integration.connectionId);
    const orphaned = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    await ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [orphaned.integration.id]);
    await expectNotFound(boot.apiKey.key, orphaned.integration.connectionId);
  });

  it('requires integrations:read (403) and a valid key (401)', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const manager = await bootstrapWorkspace(ctx, { email: boot.user.email, scopes: ['integrations:manage'] });
    const res = await readConnection(manager.apiKey.key, created.integration.connectionId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient_scope' });
    expect((await readConnection(null, created.integration.connectionId)).statusCode).toBe(401);
    // A key differing in its last character (one that already ends in A gets B).
    const { key } = boot.apiKey;
    expect((await readConnection(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'), created.integration.connectionId)).statusCode).toBe(
      401,
    );
  });
});

describe('findConnectionForWorkspace', () => {
  it('returns the connection with its Integration and environment fields, and hides deleted ones unless asked', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, {
      mode: 'live',
      name: 'Ledger',
      provider: 'Bank',
      direction: 'inbound',
      protocol: 'queue',
    });
    const found = await findConnectionForWorkspace(ctx.deps.pool, boot.workspace.id, created.integration.connectionId);
    expect(found).toEqual({
      id: created.integration.connectionId,
      integrationId: created.integration.id,
      workspaceId: boot.workspace.id,
      environmentId: created.integration.environmentId,
      mode: 'live',
      connectionKey: created.collectorConfiguration.connectionKey,
      revision: expect.stringMatching(/^[0-9]+$/),
      credentialStatus: 'active',
      credentialEpoch: 1,
      activeContractVersionId: null,
      deletedAt: null,
      environmentCategory: 'live',
      environmentMode: 'live',
      name: 'Ledger',
      provider: 'Bank',
      direction: 'inbound',
      protocol: 'queue',
    });
    const stranger = await bootstrapWorkspace(ctx);
    expect(await findConnectionForWorkspace(ctx.deps.pool, stranger.workspace.id, created.integration.connectionId)).toBeNull();
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [created.integration.connectionId]);
    expect(await findConnectionForWorkspace(ctx.deps.pool, boot.workspace.id, created.integration.connectionId)).toBeNull();
    const withDeleted = await findConnectionForWorkspace(ctx.deps.pool, boot.workspace.id, created.integration.connectionId, {
      includeDeleted: true,
    });
    expect(withDeleted?.deletedAt).toBeInstanceOf(Date);
  });

  it('takes the connection row lock with forUpdate', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const holder = await ctx.deps.pool.connect();
    try {
      await holder.query('BEGIN');
      expect(
        await findConnectionForWorkspace(holder, boot.workspace.id, created.integration.connectionId, { forUpdate: true }),
      ).not.toBeNull();
      const other = await ctx.deps.pool.connect();
      try {
        await other.query("SET lock_timeout = '100ms'");
        await expect(
          other.query('SELECT id FROM connections WHERE id = $1 FOR UPDATE', [created.integration.connectionId]),
        ).rejects.toMatchObject({ code: '55P03' });
      } finally {
        await other.query('RESET lock_timeout');
        other.release();
      }
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });
});
