import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { insertApiKey } from '../management/apiKeys/apiKeyStore.js';
import { setWritePause } from '../management/maintenance.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { FINGERPRINT_PATTERN } from '../shared/fingerprint.js';
import { newId } from '../shared/ids.js';
import { RedisKeys } from '../shared/redis.js';
import { apiKeyAuthorityLosses } from './helpers/authority.js';
import {
  advanceClock,
  bootstrapWorkspace,
  callWithKey,
  countRows,
  createTestContext,
  expectError,
  newIdempotencyKey,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import {
  countObservations,
  createCollector,
  envelope,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
} from './helpers/ingest.js';
import { insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';
import { createRuleWithKey } from './helpers/rules.js';

// 03 "Integration deletion" (issue 28 item 5) through the real management app, PostgreSQL, Redis
// and ClickHouse, with the real ingest edge for the credentials: preview, confirmation with the
// exact name and the preview's fingerprint, what a deletion does to tokens, evidence, usage and
// receipts, replays, and every code of the deletion table with nothing written.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
});
afterAll(async () => {
  await edge.close();
  await clickhouse.close();
  await ctx.close();
});
afterEach(async () => {
  await setWritePause(ctx.deps.redis, false);
  await resetClockAndHooks(ctx);
});

const TEN_MINUTES_MS = 10 * 60_000;

/** The target of a deletion route: a whole Integration, or one of its connections. */
interface Target {
  integrationId: string;
  connectionId?: string;
}

const targetPath = (t: Target) =>
  t.connectionId === undefined
    ? `/v1/integrations/${t.integrationId}`
    : `/v1/integrations/${t.integrationId}/connections/${t.connectionId}`;

function preview(key: string | null, target: Target, body: unknown = {}, query = ''): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', `${targetPath(target)}/deletion-preview${query}`, { body });
}

function confirm(
  key: string | null,
  target: Target,
  body: unknown,
  idempotencyKey: string | null = newIdempotencyKey(),
  query = '',
): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', `${targetPath(target)}/deletion${query}`, { body, idempotencyKey: idempotencyKey ?? undefined });
}

/** A POST whose JSON body is given as text (a JSON value that is not an object). */
function jsonText(key: string, url: string, text: string, idempotencyKey?: string): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return ctx.app.inject({ method: 'POST', url, headers, payload: text });
}

const status = (key: string | null, operationId: string) => callWithKey(ctx, key, 'GET', `/v1/deletion-operations/${operationId}`);

/** A preview that must succeed: its 201 body. */
async function previewOk(
  key: string,
  target: Target,
): Promise<{ operationId: string; fingerprint: string; snapshot: { integration: { name: string } } }> {
  const res = await preview(key, target);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The confirmation body of a review, with the reviewed name unless another is given. */
const confirmationOf = (
  review: { operationId: string; fingerprint: string; snapshot: { integration: { name: string } } },
  name?: string,
) => ({
  operationId: review.operationId,
  confirmName: name ?? review.snapshot.integration.name,
  fingerprint: review.fingerprint,
});

/** An Integration with a Sandbox connection (Integration creation) and a Live one (second-mode setup), each with its token. */
interface TwoModes {
  integrationId: string;
  sandbox: Collector;
  live: Collector;
  creation: { idempotencyKey: string; body: Record<string, string>; operationId: string };
  setup: { operationId: string; idempotencyKey: string; approvalFingerprint: string };
}

async function twoModes(boot: BootstrapResult, name = 'Orders Sync'): Promise<TwoModes> {
  const key = boot.apiKey.key;
  const body = { mode: 'sandbox', name, provider: 'Acme', direction: 'outbound', protocol: 'http-api' };
  const idempotencyKey = newIdempotencyKey();
  const created = await callWithKey(ctx, key, 'POST', '/v1/integrations', { body, idempotencyKey });
  expect(created.statusCode, created.body).toBe(201);
  const c = created.json();
  const sandbox: Collector = {
    ...c.collectorConfiguration,
    accountId: boot.account.id,
    connectionId: c.integration.connectionId,
    workspaceIntegrationId: c.integration.id,
    environmentId: c.integration.environmentId,
    mode: 'sandbox',
    direction: 'outbound',
    protocol: 'http-api',
  };
  const review = await callWithKey(ctx, key, 'POST', `/v1/integrations/${c.integration.id}/connections/preview`, {
    body: { destinationMode: 'live' },
  });
  expect(review.statusCode, review.body).toBe(201);
  const setupKey = newIdempotencyKey();
  const approvalFingerprint = review.json().fingerprint as string;
  const applied = await callWithKey(ctx, key, 'POST', `/v1/connection-setup/${review.json().operationId}/apply`, {
    body: { approvalFingerprint },
    idempotencyKey: setupKey,
  });
  expect(applied.statusCode, applied.body).toBe(201);
  const a = applied.json();
  const live: Collector = {
    ...a.collectorConfiguration,
    accountId: boot.account.id,
    connectionId: a.connectionId,
    workspaceIntegrationId: c.integration.id,
    environmentId: a.connection.environment.id,
    mode: 'live',
    direction: 'outbound',
    protocol: 'http-api',
  };
  return {
    integrationId: c.integration.id,
    sandbox,
    live,
    creation: { idempotencyKey, body, operationId: c.operationId },
    setup: { operationId: a.operationId, idempotencyKey: setupKey, approvalFingerprint },
  };
}

/** An incident of the connection and its evidence columns, as the analyzer writes them (the analyzer is not under test here). */
async function insertIncident(collector: Collector, workspaceId: string): Promise<string> {
  const id = newId('inc_');
  await ctx.deps.pool.query(
    `INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status, resolution_state,
                            summary, affected_records, observation_ids, first_observed_at, last_observed_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'GET /v1/orders/{orderId}:response:200', 'schema-drift', 'open', 'active', 'drift', 1, '{evt_1}',
             now(), now(), now(), now())`,
    [id, collector.connectionId, workspaceId, collector.workspaceIntegrationId, collector.environmentId, collector.mode],
  );
  await ctx.deps.pool.query(
    'UPDATE connections SET open_incident_count = open_incident_count + 1, latest_observation_at = now() WHERE id = $1',
    [collector.connectionId],
  );
  return id;
}

/** Everything a deletion writes, in PostgreSQL and Redis, to prove that a refused request wrote nothing. */
async function written(workspaceId: string, accountId: string) {
  const q = async (sql: string) => (await ctx.deps.pool.query(sql, [workspaceId])).rows;
  const connections = await q(
    'SELECT id, revision, deleted_at, credential_status, credential_epoch FROM connections WHERE workspace_id = $1 ORDER BY id',
  );
  return {
    integrations: await q('SELECT id, revision, deleted_at FROM integrations WHERE workspace_id = $1 ORDER BY id'),
    connections,
    credentials: await q(
      'SELECT cr.id, cr.status, cr.ended_at FROM credentials cr JOIN connections c ON c.id = cr.connection_id WHERE c.workspace_id = $1 ORDER BY cr.id',
    ),
    reviews: await q('SELECT id, completed_at FROM deletion_reviews WHERE workspace_id = $1 ORDER BY id'),
    operations: await q('SELECT id, kind FROM operations WHERE workspace_id = $1 ORDER BY id'),
    audit: await q('SELECT action, target_id FROM audit_events WHERE workspace_id = $1 ORDER BY id'),
    epochs: await Promise.all(connections.map((c) => ctx.deps.redis.get(RedisKeys.credentialEpoch(accountId, c.id as string)))),
  };
}

/** The evidence reads of one connection and the answer each gives once the connection is deleted. */
function evidenceReads(connectionId: string, eventId: string, incidentId: string): [url: string, code: string][] {
  return [
    [`/v1/connections/${connectionId}`, 'connection_not_found'],
    [`/v1/observations?integrationId=${connectionId}`, 'connection_not_found'],
    [`/v1/observations/${eventId}?integrationId=${connectionId}`, 'connection_not_found'],
    [`/v1/connections/${connectionId}/analytics`, 'connection_not_found'],
    [`/v1/connections/${connectionId}/coverage`, 'connection_not_found'],
    [`/v1/incidents?integrationId=${connectionId}&mode=sandbox`, 'connection_not_found'],
    [`/v1/incidents/${incidentId}?mode=sandbox`, 'incident_not_found'],
    [`/v1/integrations/${connectionId}/contracts`, 'integration_not_found'],
    [`/v1/connections/${connectionId}/reconciliation-rules`, 'connection_not_found'],
    [`/v1/connections/${connectionId}/credentials`, 'connection_not_found'],
  ];
}

describe('reviewed deletion of one connection', () => {
  it('previews, refuses a wrong-case name, deletes, revokes the token at the edge, hides the evidence, keeps usage and receipts', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const key = boot.apiKey.key;
    const w = await twoModes(boot);
    const { sandbox, live } = w;

    // A receipt of the connection: a rotation, whose token the collector then uses.
    const before = (await callWithKey(ctx, key, 'GET', `/v1/connections/${sandbox.connectionId}`)).json();
    const rotation = await callWithKey(ctx, key, 'POST', `/v1/connections/${sandbox.connectionId}/credentials/rotate`, {
      body: { expectedRevision: before.revision },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(rotation.statusCode, rotation.body).toBe(201);
    sandbox.ingestToken = rotation.json().ingestToken;

    // Evidence and configuration of the Sandbox connection, all readable before the deletion.
    const event = envelope(sandbox);
    expect((await sendEnvelopes(edge, sandbox, [event])).status).toBe(202);
    expect((await sendEnvelopes(edge, live, [envelope(live)])).status).toBe(202);
    expect(await countObservations(clickhouse, sandbox.connectionId)).toBe(1);
    const incidentId = await insertIncident(sandbox, boot.workspace.id);
    const rule = await createRuleWithKey(ctx, key, sandbox.connectionId, {
      sourceEventType: 'order.created',
      expectedObjectType: 'order',
      maxDelayMs: 60_000,
    });
    await ctx.deps.pool.query(
      `INSERT INTO rule_deadlines (rule_id, source_event_id, connection_id, source_event_type, expected_object_type, source_event_id_hash,
                                   occurred_at_ms, due_at_ms)
       VALUES ($1, $2, $3, 'order.created', 'order', 'hmac:1f2e3d', 0, 60000)`,
      [rule.rule.id, event.eventId, sandbox.connectionId],
    );
    const reads = evidenceReads(sandbox.connectionId, event.eventId as string, incidentId);
    for (const [url] of reads) expect((await callWithKey(ctx, key, 'GET', url)).statusCode, url).toBe(200);

    // The preview: what goes, bound by the fingerprint; what is lost, shown beside it.
    const target = { integrationId: w.integrationId, connectionId: sandbox.connectionId };
    const previewedAt = ctx.deps.clock.nowMs();
    const previewed = await preview(key, target);
    expect(previewed.statusCode, previewed.body).toBe(201);
    expect(previewed.headers['cache-control']).toBe('no-store');
    const review = previewed.json();
    const connectionRevision = (await callWithKey(ctx, key, 'GET', `/v1/connections/${sandbox.connectionId}`)).json().revision;
    expect(review).toEqual({
      operationId: expect.stringMatching(/^del_[0-9a-z]{26}$/),
      action: 'connection.delete',
      status: 'previewed',
      workspaceIntegrationId: w.integrationId,
      connectionId: sandbox.connectionId,
      expiresAt: expect.any(String),
      fingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
      snapshot: {
        target: { workspaceIntegrationId: w.integrationId, connectionId: sandbox.connectionId },
        integration: {
          id: w.integrationId,
          name: 'Orders Sync',
          provider: 'Acme',
          direction: 'outbound',
          protocol: 'http-api',
          revision: expect.any(String),
        },
        connections: [
          {
            connectionId: sandbox.connectionId,
            mode: 'sandbox',
            environmentId: sandbox.environmentId,
            revision: connectionRevision,
            credentialStatus: 'active',
          },
        ],
        fingerprint: expect.stringMatching(FINGERPRINT_PATTERN),
      },
      evidence: [
        {
          connectionId: sandbox.connectionId,
          latestObservationAt: expect.any(String),
          openIncidentCount: 1,
          contractVersions: 0,
          rules: 1,
        },
      ],
    });
    expect(Date.parse(review.expiresAt) - previewedAt).toBeGreaterThanOrEqual(TEN_MINUTES_MS);
    expect(Date.parse(review.expiresAt) - ctx.deps.clock.nowMs()).toBeLessThanOrEqual(TEN_MINUTES_MS);
    expect((await status(key, review.operationId)).json()).toEqual(review);

    // The name is compared exactly: another case is refused and nothing is written.
    const untouched = await written(boot.workspace.id, boot.account.id);
    for (const name of ['orders sync', 'ORDERS SYNC', 'Orders Sync ', ' Orders Sync', 'Orders  Sync']) {
      expectError(await confirm(key, target, confirmationOf(review, name)), 400, 'confirmation_mismatch');
    }
    expect(await written(boot.workspace.id, boot.account.id)).toEqual(untouched);
    expect((await sendEnvelopes(edge, sandbox, [envelope(sandbox)])).status).toBe(202);
    const usage = (await callWithKey(ctx, key, 'GET', '/v1/usage')).json();
    const stored = await countObservations(clickhouse, sandbox.connectionId);

    // The confirmation.
    const idempotencyKey = newIdempotencyKey();
    const done = await confirm(key, target, confirmationOf(review), idempotencyKey);
    expect(done.statusCode, done.body).toBe(201);
    expect(done.headers['cache-control']).toBe('no-store');
    const receipt = done.json();
    expect(receipt).toEqual({
      operationId: review.operationId,
      action: 'connection.delete',
      status: 'completed',
      workspaceIntegrationId: w.integrationId,
      connectionId: sandbox.connectionId,
      name: 'Orders Sync',
      fingerprint: review.fingerprint,
      completedAt: expect.any(String),
      integrationRevision: expect.any(String),
      integrationDeleted: false,
      credentials: [
        {
          connectionId: sandbox.connectionId,
          environmentId: sandbox.environmentId,
          mode: 'sandbox',
          revision: expect.any(String),
          status: 'revoked',
          issuedAt: expect.any(String),
          revokedAt: receipt.completedAt,
        },
      ],
      replayed: false,
      historical: false,
    });
    expect(receipt.integrationRevision).not.toBe(review.snapshot.integration.revision);
    expect(receipt.credentials[0].revision).not.toBe(connectionRevision);

    // The rows: the connection deleted with its token revoked; its open deadlines gone; its rule,
    // incident and observations kept (unreadable); one operation and one audit row of the deletion.
    const row = (
      await ctx.deps.pool.query('SELECT deleted_at, credential_status, revision FROM connections WHERE id = $1', [sandbox.connectionId])
    ).rows[0];
    expect(row).toEqual({
      deleted_at: new Date(receipt.completedAt),
      credential_status: 'revoked',
      revision: receipt.credentials[0].revision,
    });
    expect(await countRows(ctx, 'credentials', "connection_id = $1 AND status = 'active'", [sandbox.connectionId])).toBe(0);
    expect(await countRows(ctx, 'rule_deadlines', 'connection_id = $1', [sandbox.connectionId])).toBe(0);
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [sandbox.connectionId])).toBe(1);
    expect(await countRows(ctx, 'incidents', "connection_id = $1 AND status = 'open'", [sandbox.connectionId])).toBe(1);
    expect(await countObservations(clickhouse, sandbox.connectionId)).toBe(stored);
    expect(await countRows(ctx, 'operations', "id = $1 AND kind = 'connection.delete'", [review.operationId])).toBe(1);
    expect(
      await countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'connection.delete' AND target_id = $2", [
        boot.workspace.id,
        sandbox.connectionId,
      ]),
    ).toBe(1);

    // The real edge refuses the old token on its very next request (it had the credential cached).
    const refused = await sendEnvelopes(edge, sandbox, [envelope(sandbox)]);
    expect(refused.status).toBe(401);
    expect(refused.body?.error).toBe('unauthenticated');

    // Evidence reads of the deleted connection answer 404; usage reads are unchanged.
    for (const [url, code] of reads) expectError(await callWithKey(ctx, key, 'GET', url), 404, code);
    expect((await callWithKey(ctx, key, 'GET', '/v1/usage')).json()).toEqual(usage);

    // The other mode's connection is untouched: its token still works, its reads still answer.
    expect((await sendEnvelopes(edge, live, [envelope(live)])).status).toBe(202);
    expect((await callWithKey(ctx, key, 'GET', `/v1/connections/${live.connectionId}`)).json()).toMatchObject({
      credentialStatus: 'active',
    });
    const integration = (await callWithKey(ctx, key, 'GET', `/v1/integrations/${w.integrationId}`)).json().integration;
    expect(integration.revision).toBe(receipt.integrationRevision);
    expect(integration.connections.sandbox).toEqual({ status: 'not_configured', mode: 'sandbox', environmentId: sandbox.environmentId });
    expect(integration.connections.live).toMatchObject({ status: 'configured', connectionId: live.connectionId });

    // Receipts survive: the rotation's and the deletion's own are readable and historical.
    const rotationReceipt = await callWithKey(ctx, key, 'GET', `/v1/credential-operations/${rotation.json().operationId}`);
    expect(rotationReceipt.statusCode).toBe(200);
    expect(rotationReceipt.json()).toMatchObject({ operationId: rotation.json().operationId, historical: true, replayed: true });
    const statusRead = await status(key, review.operationId);
    expect(statusRead.statusCode).toBe(200);
    expect(statusRead.json()).toEqual({ ...receipt, replayed: true, historical: true });

    // The same request again replays the receipt and recreates nothing.
    const afterDeletion = await written(boot.workspace.id, boot.account.id);
    const replay = await confirm(key, target, confirmationOf(review), idempotencyKey);
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json()).toEqual({ ...receipt, replayed: true, historical: true });
    expect(await written(boot.workspace.id, boot.account.id)).toEqual(afterDeletion);
    expect((await sendEnvelopes(edge, sandbox, [envelope(sandbox)])).status).toBe(401);
  });
});

describe('reviewed deletion of an Integration', () => {
  it('deletes every connection with its token, and no retry of the creation or setup recreates one', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const key = boot.apiKey.key;
    const w = await twoModes(boot, 'Refunds');
    for (const collector of [w.sandbox, w.live]) expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    const usage = (await callWithKey(ctx, key, 'GET', '/v1/usage')).json();

    const review = await previewOk(key, { integrationId: w.integrationId });
    expect(review).toMatchObject({
      action: 'integration.delete',
      connectionId: null,
      snapshot: {
        target: { workspaceIntegrationId: w.integrationId, connectionId: null },
        connections: [w.sandbox.connectionId, w.live.connectionId].sort().map((connectionId) => expect.objectContaining({ connectionId })),
      },
    });
    const idempotencyKey = newIdempotencyKey();
    const done = await confirm(key, { integrationId: w.integrationId }, confirmationOf(review), idempotencyKey);
    expect(done.statusCode, done.body).toBe(201);
    const receipt = done.json();
    expect(receipt).toMatchObject({
      action: 'integration.delete',
      connectionId: null,
      integrationDeleted: true,
      replayed: false,
      historical: false,
    });
    expect(receipt.credentials.map((c: { connectionId: string; status: string }) => [c.connectionId, c.status])).toEqual(
      [w.sandbox.connectionId, w.live.connectionId].sort().map((id) => [id, 'revoked']),
    );

    // Both tokens refused at once; the Integration and both connections gone from every read.
    for (const collector of [w.sandbox, w.live]) expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(401);
    expectError(await callWithKey(ctx, key, 'GET', `/v1/integrations/${w.integrationId}`), 404, 'integration_not_found');
    for (const collector of [w.sandbox, w.live]) {
      expectError(await callWithKey(ctx, key, 'GET', `/v1/connections/${collector.connectionId}`), 404, 'connection_not_found');
    }
    const inventory = (await callWithKey(ctx, key, 'GET', '/v1/integrations?view=canonical')).json();
    expect(inventory.items.map((item: { id: string }) => item.id)).not.toContain(w.integrationId);
    expect((await callWithKey(ctx, key, 'GET', '/v1/usage')).json()).toEqual(usage);

    // The setup receipt survives, historical.
    const setupReceipt = await callWithKey(ctx, key, 'GET', `/v1/connection-setup/${w.setup.operationId}`);
    expect(setupReceipt.json()).toMatchObject({ status: 'completed', historical: true, replayed: true });

    // Retries with the original keys replay; nothing is recreated (01: a retry never recreates a deleted connection).
    const afterDeletion = await written(boot.workspace.id, boot.account.id);
    const creationRetry = await callWithKey(ctx, key, 'POST', '/v1/integrations', {
      body: w.creation.body,
      idempotencyKey: w.creation.idempotencyKey,
    });
    expect(creationRetry.statusCode, creationRetry.body).toBe(200);
    expect(creationRetry.json()).toMatchObject({
      operationId: w.creation.operationId,
      replayed: true,
      integration: { id: w.integrationId, connectionId: w.sandbox.connectionId },
    });
    expect(creationRetry.json().collectorConfiguration.ingestToken).toBeUndefined();
    const setupRetry = await callWithKey(ctx, key, 'POST', `/v1/connection-setup/${w.setup.operationId}/apply`, {
      body: { approvalFingerprint: w.setup.approvalFingerprint },
      idempotencyKey: w.setup.idempotencyKey,
    });
    expect(setupRetry.statusCode, setupRetry.body).toBe(200);
    const deletionRetry = await confirm(key, { integrationId: w.integrationId }, confirmationOf(review), idempotencyKey);
    expect(deletionRetry.statusCode).toBe(200);
    expect(deletionRetry.json()).toEqual({ ...receipt, replayed: true, historical: true });
    expect(await written(boot.workspace.id, boot.account.id)).toEqual(afterDeletion);
    expect(await countRows(ctx, 'connections', 'integration_id = $1 AND deleted_at IS NULL', [w.integrationId])).toBe(0);
    for (const collector of [w.sandbox, w.live]) expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(401);
  });

  it('deletes an Integration without connections, and one of a legacy workspace', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const created = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox', name: 'Lonely' });
    const connectionReview = await previewOk(boot.apiKey.key, {
      integrationId: created.workspaceIntegrationId,
      connectionId: created.connectionId,
    });
    const target = { integrationId: created.workspaceIntegrationId, connectionId: created.connectionId };
    expect((await confirm(boot.apiKey.key, target, confirmationOf(connectionReview))).statusCode).toBe(201);
    const empty = await previewOk(boot.apiKey.key, { integrationId: created.workspaceIntegrationId });
    expect(empty).toMatchObject({ snapshot: { connections: [] }, evidence: [] });
    const done = await confirm(boot.apiKey.key, { integrationId: created.workspaceIntegrationId }, confirmationOf(empty));
    expect(done.statusCode, done.body).toBe(201);
    expect(done.json()).toMatchObject({ integrationDeleted: true, credentials: [] });

    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id, 'Legacy orders');
    const production = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'production' });
    const review = await previewOk(legacy.apiKey.key, { integrationId });
    const deleted = await confirm(legacy.apiKey.key, { integrationId }, confirmationOf(review, 'Legacy orders'));
    expect(deleted.statusCode, deleted.body).toBe(201);
    expect(deleted.json().credentials).toEqual([expect.objectContaining({ connectionId: production.connectionId, status: 'not_issued' })]);
    expect(await countRows(ctx, 'connections', 'id = $1 AND deleted_at IS NOT NULL', [production.connectionId])).toBe(1);
  });
});

describe('03 Integration deletion errors', () => {
  /** A fresh workspace with one Sandbox connection (the collector) and a pending review of it. */
  async function pending(kind: 'integration' | 'connection' = 'connection') {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox', name: 'Payments' });
    const target: Target =
      kind === 'integration'
        ? { integrationId: collector.workspaceIntegrationId }
        : { integrationId: collector.workspaceIntegrationId, connectionId: collector.connectionId };
    const review = await previewOk(boot.apiKey.key, target);
    return { boot, key: boot.apiKey.key, collector, target, review };
  }

  /** Runs `refused` and checks it answered `status`/`code` and that nothing was written. */
  async function refusedWithoutWrites(boot: BootstrapResult, refused: () => Promise<LightMyRequestResponse>, code: number, error: string) {
    const before = await written(boot.workspace.id, boot.account.id);
    expectError(await refused(), code, error);
    expect(await written(boot.workspace.id, boot.account.id)).toEqual(before);
  }

  it('400 invalid_integration_deletion: preview and confirmation bodies and queries', async () => {
    const { boot, key, target, review } = await pending();
    const good = confirmationOf(review);
    for (const body of [{ confirmName: 'Payments' }, { x: 1 }, [], [{}]]) {
      await refusedWithoutWrites(boot, () => preview(key, target, body), 400, 'invalid_integration_deletion');
    }
    for (const text of ['null', '"text"', '7']) {
      await refusedWithoutWrites(
        boot,
        () => jsonText(key, `${targetPath(target)}/deletion-preview`, text),
        400,
        'invalid_integration_deletion',
      );
      const confirmation = () => jsonText(key, `${targetPath(target)}/deletion`, text, newIdempotencyKey());
      await refusedWithoutWrites(boot, confirmation, 400, 'invalid_integration_deletion');
    }
    await refusedWithoutWrites(boot, () => preview(key, target, {}, '?force=1'), 400, 'invalid_integration_deletion');
    const { operationId: _o, ...withoutId } = good;
    const { fingerprint: _f, ...withoutFingerprint } = good;
    const { confirmName: _n, ...withoutName } = good;
    for (const body of [
      {},
      withoutId,
      withoutFingerprint,
      withoutName,
      { ...good, extra: true },
      { ...good, fingerprint: good.fingerprint.toUpperCase() },
      { ...good, fingerprint: 'sha256:abc' },
      { ...good, operationId: 'del_x' },
      { ...good, operationId: newId('consetup_') },
      { ...good, operationId: review.operationId.toUpperCase() },
      { ...good, confirmName: 7 },
      { ...good, confirmName: 'Pay\u0000ments' },
    ]) {
      await refusedWithoutWrites(boot, () => confirm(key, target, body), 400, 'invalid_integration_deletion');
    }
    await refusedWithoutWrites(
      boot,
      () => confirm(key, target, good, newIdempotencyKey(), '?dryRun=1'),
      400,
      'invalid_integration_deletion',
    );
    // The Idempotency-Key header comes first, as on every keyed route.
    await refusedWithoutWrites(boot, () => confirm(key, target, good, null), 400, 'idempotency_key_required');
    await refusedWithoutWrites(boot, () => confirm(key, target, {}, 'short'), 400, 'idempotency_key_required');
  });

  it('400 confirmation_mismatch: anything but the exact, case-sensitive name', async () => {
    const { boot, key, target, review } = await pending('integration');
    for (const name of ['payments', 'PAYMENTS', 'Payments ', 'Payment', '', 'Paymentſ']) {
      await refusedWithoutWrites(boot, () => confirm(key, target, confirmationOf(review, name)), 400, 'confirmation_mismatch');
    }
  });

  it('401 and 403 insufficient_scope on every route, before the body is read', async () => {
    const { boot, target, review } = await pending();
    const reader = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:read', 'observations:read', 'contracts:write'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    await refusedWithoutWrites(boot, () => preview(reader.key, target), 403, 'insufficient_scope');
    await refusedWithoutWrites(boot, () => confirm(reader.key, target, confirmationOf(review)), 403, 'insufficient_scope');
    await refusedWithoutWrites(boot, () => confirm(reader.key, target, { bad: true }, null), 403, 'insufficient_scope');
    expectError(await status(reader.key, review.operationId), 403, 'insufficient_scope');
    await refusedWithoutWrites(boot, () => preview(null, target), 401, 'unauthenticated');
    await refusedWithoutWrites(boot, () => confirm(null, target, confirmationOf(review)), 401, 'unauthenticated');
    expectError(await status(null, review.operationId), 401, 'unauthenticated');
  });

  it('404 not_found: unknown, malformed, foreign, deleted and mismatched targets; another key’s review', async () => {
    const { boot, key, collector, target, review } = await pending();
    const stranger = await bootstrapWorkspace(ctx);
    const foreign = await createCollector(ctx, stranger.apiKey.key, { mode: 'sandbox', name: 'Payments' });
    const other = await createCollector(ctx, key, { mode: 'sandbox', name: 'Other' });
    const previewTargets: Target[] = [
      { integrationId: 'wint_00000000000000000000000000' },
      { integrationId: collector.connectionId },
      { integrationId: 'x' },
      { integrationId: collector.workspaceIntegrationId.toUpperCase() },
      { integrationId: foreign.workspaceIntegrationId },
      { integrationId: collector.workspaceIntegrationId, connectionId: other.connectionId },
      { integrationId: collector.workspaceIntegrationId, connectionId: collector.workspaceIntegrationId },
      { integrationId: collector.workspaceIntegrationId, connectionId: 'int_00000000000000000000000000' },
      { integrationId: collector.workspaceIntegrationId, connectionId: foreign.connectionId },
      { integrationId: foreign.workspaceIntegrationId, connectionId: foreign.connectionId },
    ];
    for (const t of previewTargets) await refusedWithoutWrites(boot, () => preview(key, t), 404, 'not_found');
    // A confirmation looks up its review before the path's target (a well-formed id of another
    // target is operation_mismatch); ids of the wrong form name nothing.
    for (const t of [previewTargets[1], previewTargets[2], previewTargets[3], previewTargets[6]]) {
      await refusedWithoutWrites(boot, () => confirm(key, t, confirmationOf(review)), 404, 'not_found');
    }

    // A review is the previewing key's: another key of the workspace finds none.
    const second = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    await refusedWithoutWrites(boot, () => confirm(second.key, target, confirmationOf(review)), 404, 'not_found');
    expectError(await status(second.key, review.operationId), 404, 'not_found');
    await refusedWithoutWrites(
      boot,
      () => confirm(key, target, { ...confirmationOf(review), operationId: newId('del_') }),
      404,
      'not_found',
    );
    for (const id of [newId('del_'), 'del_x', newId('consetup_')]) expectError(await status(key, id), 404, 'not_found');
    expectError(await status(stranger.apiKey.key, review.operationId), 404, 'not_found');

    // Deleted since the review: the connection (by a review of the whole Integration), then its Integration.
    const whole = await previewOk(key, { integrationId: collector.workspaceIntegrationId });
    expect((await confirm(key, { integrationId: collector.workspaceIntegrationId }, confirmationOf(whole))).statusCode).toBe(201);
    await refusedWithoutWrites(boot, () => preview(key, target), 404, 'not_found');
    await refusedWithoutWrites(boot, () => preview(key, { integrationId: collector.workspaceIntegrationId }), 404, 'not_found');
    await refusedWithoutWrites(boot, () => confirm(key, target, confirmationOf(review)), 404, 'not_found');
  });

  it('409 deletion_preview_expired: ten minutes after the preview, by server time', async () => {
    const { boot, key, target, review } = await pending();
    expect((await status(key, review.operationId)).json().status).toBe('previewed');
    await advanceClock(ctx, TEN_MINUTES_MS);
    expect((await status(key, review.operationId)).json()).toMatchObject({ status: 'expired', operationId: review.operationId });
    await refusedWithoutWrites(boot, () => confirm(key, target, confirmationOf(review)), 409, 'deletion_preview_expired');
  });

  it('409 deletion_preview_expired when the review expires during the confirmation: everything rolls back', async () => {
    const { boot, key, target, review } = await pending();
    ctx.hooks.beforeAuthorityRecheck = async () => {
      await advanceClock(ctx, TEN_MINUTES_MS);
    };
    await refusedWithoutWrites(boot, () => confirm(key, target, confirmationOf(review)), 409, 'deletion_preview_expired');
  });

  it('409 deletion_preview_stale: a configuration, connection set or authorization change since the review, or a spent review', async () => {
    // A credential rotation moves the connection's revision.
    const rotated = await pending();
    const connection = (await callWithKey(ctx, rotated.key, 'GET', `/v1/connections/${rotated.collector.connectionId}`)).json();
    const rotation = await callWithKey(ctx, rotated.key, 'POST', `/v1/connections/${rotated.collector.connectionId}/credentials/rotate`, {
      body: { expectedRevision: connection.revision },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(rotation.statusCode).toBe(201);
    await refusedWithoutWrites(
      rotated.boot,
      () => confirm(rotated.key, rotated.target, confirmationOf(rotated.review)),
      409,
      'deletion_preview_stale',
    );

    // The Integration gained a connection (second-mode setup) after its review.
    const grown = await pending('integration');
    const setup = await callWithKey(
      ctx,
      grown.key,
      'POST',
      `/v1/integrations/${grown.collector.workspaceIntegrationId}/connections/preview`,
      {
        body: { destinationMode: 'live' },
      },
    );
    const applied = await callWithKey(ctx, grown.key, 'POST', `/v1/connection-setup/${setup.json().operationId}/apply`, {
      body: { approvalFingerprint: setup.json().fingerprint },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(applied.statusCode).toBe(201);
    await refusedWithoutWrites(
      grown.boot,
      () => confirm(grown.key, grown.target, confirmationOf(grown.review)),
      409,
      'deletion_preview_stale',
    );

    // The Integration lost a connection after its review (the other review was confirmed first).
    const shrunk = await pending('integration');
    const single = await previewOk(shrunk.key, { integrationId: shrunk.target.integrationId, connectionId: shrunk.collector.connectionId });
    expect(
      (
        await confirm(
          shrunk.key,
          { integrationId: shrunk.target.integrationId, connectionId: shrunk.collector.connectionId },
          confirmationOf(single),
        )
      ).statusCode,
    ).toBe(201);
    await refusedWithoutWrites(
      shrunk.boot,
      () => confirm(shrunk.key, shrunk.target, confirmationOf(shrunk.review)),
      409,
      'deletion_preview_stale',
    );

    // The workspace authorization epoch moved (a membership change, archive and restore) since the review.
    const moved = await pending();
    await ctx.deps.pool.query('UPDATE workspaces SET auth_epoch = auth_epoch + 1 WHERE id = $1', [moved.boot.workspace.id]);
    await refusedWithoutWrites(
      moved.boot,
      () => confirm(moved.key, moved.target, confirmationOf(moved.review)),
      409,
      'deletion_preview_stale',
    );

    // A review already confirmed under another Idempotency-Key is spent.
    const spent = await pending();
    expect((await confirm(spent.key, spent.target, confirmationOf(spent.review))).statusCode).toBe(201);
    await refusedWithoutWrites(
      spent.boot,
      () => confirm(spent.key, spent.target, confirmationOf(spent.review)),
      409,
      'deletion_preview_stale',
    );
  });

  it('409 operation_mismatch: a review of another target or kind, or the fingerprint of another review', async () => {
    const { boot, key, collector, target, review } = await pending();
    const whole = await previewOk(key, { integrationId: collector.workspaceIntegrationId });
    const other = await createCollector(ctx, key, { mode: 'sandbox', name: 'Payments' });
    const foreign = await createCollector(ctx, (await bootstrapWorkspace(ctx)).apiKey.key, { mode: 'sandbox', name: 'Payments' });
    const again = await previewOk(key, target);
    const mismatches: [Target, unknown][] = [
      // The connection's review confirmed as the Integration's, and the reverse.
      [{ integrationId: collector.workspaceIntegrationId }, confirmationOf(review)],
      [target, confirmationOf(whole)],
      // A review of this Integration confirmed on another Integration (same name) or connection.
      [{ integrationId: other.workspaceIntegrationId }, confirmationOf(whole)],
      [{ integrationId: other.workspaceIntegrationId, connectionId: other.connectionId }, confirmationOf(review)],
      // Whatever the path names instead: an unknown Integration, another workspace's.
      [{ integrationId: 'wint_00000000000000000000000000' }, confirmationOf(whole)],
      [{ integrationId: foreign.workspaceIntegrationId, connectionId: foreign.connectionId }, confirmationOf(review)],
      // Another review's fingerprint: two reviews of one state are confirmed apart.
      [target, { ...confirmationOf(review), fingerprint: again.fingerprint }],
      [target, { ...confirmationOf(review), fingerprint: `sha256:${'0'.repeat(64)}` }],
    ];
    for (const [t, body] of mismatches) await refusedWithoutWrites(boot, () => confirm(key, t, body), 409, 'operation_mismatch');
  });

  it('409 idempotency_conflict: the key of another operation, another request or another API key', async () => {
    const { boot, key, collector, target, review } = await pending();
    const connection = (await callWithKey(ctx, key, 'GET', `/v1/connections/${collector.connectionId}`)).json();
    const rotationKey = newIdempotencyKey();
    const rotation = await callWithKey(ctx, key, 'POST', `/v1/connections/${collector.connectionId}/credentials/rotate`, {
      body: { expectedRevision: connection.revision },
      idempotencyKey: rotationKey,
    });
    expect(rotation.statusCode).toBe(201);
    await refusedWithoutWrites(boot, () => confirm(key, target, confirmationOf(review), rotationKey), 409, 'idempotency_conflict');

    const fresh = await previewOk(key, target);
    const idempotencyKey = newIdempotencyKey();
    expect((await confirm(key, target, confirmationOf(fresh), idempotencyKey)).statusCode).toBe(201);
    const second = await insertApiKey(ctx.deps.pool, {
      workspaceId: boot.workspace.id,
      scopes: ['integrations:manage'],
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    });
    // Another body (the name a client might correct), another target, another key: never a replay.
    await refusedWithoutWrites(
      boot,
      () => confirm(key, target, confirmationOf(fresh, 'payments'), idempotencyKey),
      409,
      'idempotency_conflict',
    );
    await refusedWithoutWrites(
      boot,
      () => confirm(key, { integrationId: collector.workspaceIntegrationId }, confirmationOf(fresh), idempotencyKey),
      409,
      'idempotency_conflict',
    );
    await refusedWithoutWrites(boot, () => confirm(second.key, target, confirmationOf(fresh), idempotencyKey), 409, 'idempotency_conflict');
    // And a deletion's key cannot create an Integration.
    const creation = { mode: 'sandbox', name: 'x', provider: 'y', direction: 'outbound', protocol: 'http-api' };
    await refusedWithoutWrites(
      boot,
      () => callWithKey(ctx, key, 'POST', '/v1/integrations', { body: creation, idempotencyKey }),
      409,
      'idempotency_conflict',
    );
  });

  it('503 mode_cutover_write_paused on preview and confirmation; the status read stays available', async () => {
    const { boot, key, target, review } = await pending();
    await setWritePause(ctx.deps.redis, true);
    for (const call of [() => preview(key, target), () => confirm(key, target, confirmationOf(review))]) {
      const before = await written(boot.workspace.id, boot.account.id);
      const res = await call();
      expectError(res, 503, 'mode_cutover_write_paused');
      expect(res.headers['retry-after']).toBe('1');
      expect(await written(boot.workspace.id, boot.account.id)).toEqual(before);
    }
    expect((await status(key, review.operationId)).statusCode).toBe(200);
    await setWritePause(ctx.deps.redis, false);
    expect((await confirm(key, target, confirmationOf(review))).statusCode).toBe(201);
  });

  for (const [label, lose, code, error] of apiKeyAuthorityLosses('deletion_preview_stale')) {
    it(`rolls everything back when ${label} during the confirmation (${code} ${error})`, async () => {
      const { boot, key, collector, target, review } = await pending();
      ctx.hooks.beforeAuthorityRecheck = async (kind) => {
        if (kind === 'connection.delete') await lose(ctx, boot);
      };
      const before = await written(boot.workspace.id, boot.account.id);
      expectError(await confirm(key, target, confirmationOf(review)), code, error);
      ctx.hooks.beforeAuthorityRecheck = undefined;
      // The authority change itself is the only difference: no deletion, revocation, receipt, audit or epoch.
      expect(await written(boot.workspace.id, boot.account.id)).toEqual(before);
      expect(await countRows(ctx, 'connections', 'id = $1 AND deleted_at IS NULL', [collector.connectionId])).toBe(1);
    });
  }

  it('declares every code of the deletion table on its routes', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const codes = (path: string) => document.paths[path].post['x-error-codes'] as string[];
    for (const path of [
      '/v1/integrations/{workspaceIntegrationId}/deletion',
      '/v1/integrations/{workspaceIntegrationId}/connections/{connectionId}/deletion',
    ]) {
      expect(codes(path)).toEqual(
        expect.arrayContaining([
          'invalid_integration_deletion',
          'confirmation_mismatch',
          'insufficient_scope',
          'not_found',
          'deletion_preview_expired',
          'deletion_preview_stale',
          'operation_mismatch',
          'idempotency_conflict',
          'mode_cutover_write_paused',
        ]),
      );
    }
    expect(codes('/v1/integrations/{workspaceIntegrationId}/deletion-preview')).toEqual(
      expect.arrayContaining(['invalid_integration_deletion', 'insufficient_scope', 'not_found', 'mode_cutover_write_paused']),
    );
    expect(document.paths['/v1/deletion-operations/{operationId}'].get['x-scopes']).toEqual(['integrations:manage']);
  });
});
