import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { RULE_MUTATIONS_PER_MINUTE } from '../management/rules/ruleService.js';
import { newId } from '../shared/ids.js';
import { insertConnection, insertConnections, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import { bootstrapWorkspace, callWithKey, countRows, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';

// 02 "Reconciliation rules" through the real management app and PostgreSQL and Redis: reads,
// create, update and delete with receipts, revisions, cursors, the error table and the
// workspace's mutation rate.

let ctx: TestContext;
beforeAll(async () => { ctx = await createTestContext(); });
afterAll(async () => { await ctx.close(); });

const rulesUrl = (connectionId: string) => `/v1/connections/${connectionId}/reconciliation-rules`;
const ruleUrl = (connectionId: string, ruleId: string) => `${rulesUrl(connectionId)}/${ruleId}`;

const create = (key: string, connectionId: string, body: unknown, idempotencyKey: string = newIdempotencyKey()) =>
  callWithKey(ctx, key, 'POST', rulesUrl(connectionId), { body, idempotencyKey });
const update = (key: string, connectionId: string, ruleId: string, body: unknown, idempotencyKey: string = newIdempotencyKey()) =>
  callWithKey(ctx, key, 'PATCH', ruleUrl(connectionId, ruleId), { body, idempotencyKey });
const remove = (key: string, connectionId: string, ruleId: string, body: unknown, idempotencyKey: string = newIdempotencyKey()) =>
  callWithKey(ctx, key, 'DELETE', ruleUrl(connectionId, ruleId), { body, idempotencyKey });

const definition = (n = 0) => ({ sourceEventType: `order.paid.${n}`, expectedObjectType: 'shipment', maxDelayMs: 60_000 });

/** Everything a mutation writes: all of it must stay unchanged after a refused one. */
async function writes(boot: BootstrapResult, connectionId: string) {
  return {
    revision: (await readConnectionRow(ctx, connectionId)).revision,
    rules: await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [connectionId]),
    operations: await countRows(ctx, 'operations', 'workspace_id = $1', [boot.workspace.id]),
    audit: await countRows(ctx, 'audit_events', "workspace_id = $1 AND action LIKE 'rule.%'", [boot.workspace.id]),
  };
}

async function setup(): Promise<{ boot: BootstrapResult; connection: ConnectionFixture }> {
  const boot = await bootstrapWorkspace(ctx);
  return { boot, connection: await insertConnection(ctx, boot) };
}

/** Creates a rule and returns the receipt (the resulting revision is the next expectedRevision). */
async function created(boot: BootstrapResult, connectionId: string, expectedRevision: string, n = 0): Promise<Record<string, any>> {
  const res = await create(boot.apiKey.key, connectionId, { expectedRevision, ...definition(n) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

function expectError(res: LightMyRequestResponse, status: number, error: string): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject({ error });
}

describe('create, read, update and delete', () => {
  it('creates a disabled rule under the reviewed revision, with a receipt, a new revision and an audit row', async () => {
    const { boot, connection } = await setup();
    const res = await create(boot.apiKey.key, connection.connectionId, { expectedRevision: connection.revision, ...definition() });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const receipt = res.json();
    expect(receipt).toMatchObject({
      connectionId: connection.connectionId, workspaceIntegrationId: connection.integrationId, mode: 'sandbox', action: 'rule.create', status: 'completed',
      expectedRevision: connection.revision, replayed: false, historical: false,
      rule: { ...definition(), enabled: false, lastEvaluatedAt: null },
    });
    expect(receipt.operationId).toMatch(/^ruleop_/);
    expect(receipt.rule.id).toMatch(/^rule_/);
    expect(receipt.requestFingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(BigInt(receipt.revision)).toBeGreaterThan(BigInt(connection.revision));
    expect((await readConnectionRow(ctx, connection.connectionId)).revision).toBe(receipt.revision);
    expect(await countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'rule.create' AND target_id = $2", [boot.workspace.id, receipt.rule.id])).toBe(1);

    const read = await callWithKey(ctx, boot.apiKey.key, 'GET', ruleUrl(connection.connectionId, receipt.rule.id));
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      connectionId: connection.connectionId, workspaceIntegrationId: connection.integrationId, mode: 'sandbox', revision: receipt.revision, rule: receipt.rule,
    });
  });

  it('updates only the fields sent, enables and disables; delete keeps the removed rule in its receipt', async () => {
    const { boot, connection } = await setup();
    const first = await created(boot, connection.connectionId, connection.revision);
    const ruleId = first.rule.id as string;
    const enabled = await update(boot.apiKey.key, connection.connectionId, ruleId, { expectedRevision: first.revision, enabled: true, maxDelayMs: 5_000 });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json()).toMatchObject({ action: 'rule.update', rule: { ...definition(), maxDelayMs: 5_000, enabled: true }, expectedRevision: first.revision });
    const renamed = await update(boot.apiKey.key, connection.connectionId, ruleId, { expectedRevision: enabled.json().revision, expectedObjectType: 'parcel:v2' });
    expect(renamed.json().rule).toMatchObject({ sourceEventType: 'order.paid.0', expectedObjectType: 'parcel:v2', maxDelayMs: 5_000, enabled: true });

    const removed = await remove(boot.apiKey.key, connection.connectionId, ruleId, { expectedRevision: renamed.json().revision });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ action: 'rule.delete', rule: renamed.json().rule });
    expect((await callWithKey(ctx, boot.apiKey.key, 'GET', ruleUrl(connection.connectionId, ruleId))).json()).toEqual({ error: 'expected_outcome_not_found' });
    // The receipt of the first operation is now historical: the revision moved on.
    const recovered = await callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/rule-operations/${first.operationId}`);
    expect(recovered.statusCode).toBe(200);
    expect(recovered.json()).toEqual({ ...first, replayed: true, historical: true });
  });
});

describe('retries and refusals', () => {
  it('replays an identical retry with 200 and counts nothing twice; another body under the key is idempotency_conflict', async () => {
    const { boot, connection } = await setup();
    const key = newIdempotencyKey();
    const body = { expectedRevision: connection.revision, ...definition() };
    const first = await create(boot.apiKey.key, connection.connectionId, body, key);
    const before = await writes(boot, connection.connectionId);
    const replay = await create(boot.apiKey.key, connection.connectionId, body, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ ...first.json(), replayed: true, historical: false });
    expectError(await create(boot.apiKey.key, connection.connectionId, { ...body, maxDelayMs: 2_000 }, key), 409, 'idempotency_conflict');
    expect(await writes(boot, connection.connectionId)).toEqual(before);
  });

  it('refuses a stale revision, a duplicate pair and a rule with incident history, writing nothing', async () => {
    const { boot, connection } = await setup();
    const first = await created(boot, connection.connectionId, connection.revision);
    const before = await writes(boot, connection.connectionId);
    expectError(await create(boot.apiKey.key, connection.connectionId, { expectedRevision: connection.revision, ...definition(1) }), 409, 'connection_configuration_changed');
    expectError(await create(boot.apiKey.key, connection.connectionId, { expectedRevision: first.revision, ...definition() }), 409, 'expected_outcome_already_exists');
    const second = await created(boot, connection.connectionId, first.revision, 1);
    expectError(await update(boot.apiKey.key, connection.connectionId, second.rule.id, { expectedRevision: second.revision, sourceEventType: 'order.paid.0' }), 409, 'expected_outcome_already_exists');

    await ctx.deps.pool.query(
      `INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status, resolution_state,
                              summary, affected_records, first_observed_at, last_observed_at, created_at, updated_at, resolved_at, rule_id)
       VALUES ($1, $2, $3, $4, $5, 'sandbox', 'rule', 'expected-outcome-missing', 'resolved', 'active', 'missing shipment', 1, now(), now(), now(), now(), now(), $6)`,
      [newId('inc_'), connection.connectionId, boot.workspace.id, connection.integrationId, connection.environmentId, first.rule.id],
    );
    const withSecond = await writes(boot, connection.connectionId);
    expectError(await remove(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: second.revision }), 409, 'expected_outcome_has_incident_history');
    expect(await writes(boot, connection.connectionId)).toEqual(withSecond);
    expect(withSecond.rules).toBe(before.rules + 1);
    // Disabling through a reviewed PATCH is the way out.
    expect((await update(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: second.revision, enabled: false })).statusCode).toBe(200);
  });

  it('answers the request errors of the Rules table', async () => {
    const { boot, connection } = await setup();
    const base = { expectedRevision: connection.revision, ...definition() };
    const invalid = [
      { ...base, sourceEventType: '' },
      { ...base, sourceEventType: 'order paid' },
      { ...base, expectedObjectType: 'x'.repeat(121) },
      { ...base, maxDelayMs: 999 },
      { ...base, maxDelayMs: 86_400_001 },
      { ...base, maxDelayMs: 1500.5 },
      { ...base, maxDelayMs: '60000' },
      { ...base, enabled: 'yes' },
      { ...base, tenantId: 'ten_x' },
      { expectedRevision: connection.revision, sourceEventType: 'a', expectedObjectType: 'b' },
    ];
    for (const body of invalid) expectError(await create(boot.apiKey.key, connection.connectionId, body), 400, 'invalid_rule_request');
    expectError(await callWithKey(ctx, boot.apiKey.key, 'POST', rulesUrl(connection.connectionId), { body: base }), 400, 'idempotency_key_required');
    expectError(await callWithKey(ctx, boot.apiKey.key, 'POST', `${rulesUrl(connection.connectionId)}?dryRun=1`, { body: base, idempotencyKey: newIdempotencyKey() }), 400, 'invalid_rule_request');

    const first = await created(boot, connection.connectionId, connection.revision);
    expectError(await update(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: first.revision }), 400, 'invalid_rule_request');
    expectError(await remove(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: first.revision, enabled: false }), 400, 'invalid_rule_request');
    expectError(await update(boot.apiKey.key, connection.connectionId, newId('rule_'), { expectedRevision: first.revision, enabled: true }), 404, 'expected_outcome_not_found');
    expectError(await update(boot.apiKey.key, connection.connectionId, 'rule_nope', { expectedRevision: first.revision, enabled: true }), 404, 'expected_outcome_not_found');

    // Another workspace's connection and rule are not found; a read-only key may read but not change.
    const stranger = await bootstrapWorkspace(ctx);
    expectError(await create(stranger.apiKey.key, connection.connectionId, { ...base, expectedRevision: first.revision }), 404, 'connection_not_found');
    expectError(await callWithKey(ctx, stranger.apiKey.key, 'GET', ruleUrl(connection.connectionId, first.rule.id)), 404, 'connection_not_found');
    expectError(await callWithKey(ctx, stranger.apiKey.key, 'GET', `/v1/rule-operations/${first.operationId}`), 404, 'operation_not_found');
    const reader = await bootstrapWorkspace(ctx, { email: boot.user.email, scopes: ['integrations:read'] });
    expect((await callWithKey(ctx, reader.apiKey.key, 'GET', rulesUrl(connection.connectionId))).statusCode).toBe(200);
    expectError(await create(reader.apiKey.key, connection.connectionId, { ...base, expectedRevision: first.revision }), 403, 'insufficient_scope');
    // The receipt belongs to the key that made it: another key of the same workspace cannot inherit it.
    const sibling = await bootstrapWorkspace(ctx, { email: boot.user.email });
    expectError(await callWithKey(ctx, sibling.apiKey.key, 'GET', `/v1/rule-operations/${first.operationId}`), 404, 'operation_not_found');
    expectError(await callWithKey(ctx, null, 'GET', rulesUrl(connection.connectionId)), 401, 'unauthenticated');
  });
});

describe('the list', () => {
  it('pages oldest first with a cursor bound to the connection and its revision', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    let revision = sandbox.revision;
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const receipt = await created(boot, sandbox.connectionId, revision, n);
      revision = receipt.revision;
      ids.push(receipt.rule.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: LightMyRequestResponse = await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page).toMatchObject({ connectionId: sandbox.connectionId, workspaceIntegrationId: sandbox.integrationId, mode: 'sandbox', revision });
      seen.push(...page.rules.map((rule: { id: string }) => rule.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    const page = (await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?limit=2`)).json();
    expectError(await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(live.connectionId)}?cursor=${page.nextCursor}`), 400, 'invalid_rule_cursor');
    expectError(await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?cursor=${page.nextCursor.slice(0, -2)}xx`), 400, 'invalid_rule_cursor');
    for (const limit of ['0', '101', '01', 'ten']) {
      expectError(await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?limit=${limit}`), 400, 'invalid_rule_request');
    }
    await update(boot.apiKey.key, sandbox.connectionId, ids[0], { expectedRevision: revision, enabled: true });
    expectError(await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?cursor=${page.nextCursor}`), 409, 'rule_cursor_stale');
  });
});

describe('the workspace rate', () => {
  it(`takes ${RULE_MUTATIONS_PER_MINUTE} new mutations a minute, then 429 rate_limited with Retry-After; identical retries are not counted`, async () => {
    const { boot, connection } = await setup();
    let revision = connection.revision;
    const firstKey = newIdempotencyKey();
    const firstBody = { expectedRevision: revision, ...definition(0) };
    for (let n = 0; n < RULE_MUTATIONS_PER_MINUTE; n++) {
      const res = n === 0
        ? await create(boot.apiKey.key, connection.connectionId, firstBody, firstKey)
        : await create(boot.apiKey.key, connection.connectionId, { expectedRevision: revision, ...definition(n) });
      expect(res.statusCode, res.body).toBe(201);
      revision = res.json().revision;
      // Retries of the first one along the way take no slot.
      if (n % 20 === 0) expect((await create(boot.apiKey.key, connection.connectionId, firstBody, firstKey)).statusCode).toBe(200);
    }
    const before = await writes(boot, connection.connectionId);
    const limited = await create(boot.apiKey.key, connection.connectionId, { expectedRevision: revision, ...definition(1_000) });
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await writes(boot, connection.connectionId)).toEqual(before);
    // A replay still answers while the window is full.
    expect((await create(boot.apiKey.key, connection.connectionId, firstBody, firstKey)).statusCode).toBe(200);
  });
});
