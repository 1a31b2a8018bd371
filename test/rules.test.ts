import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { RULE_MUTATIONS_PER_MINUTE } from '../management/rules/ruleService.js';
import { newId } from '../shared/ids.js';
import { apiKeyAuthorityLosses } from './helpers/authority.js';
import { insertConnection, insertConnections, readConnectionRow, type ConnectionFixture } from './helpers/connections.js';
import { bootstrapWorkspace, callWithKey, countRows, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';
import { ruleChangeJobs, type RuleReceipt } from './helpers/rules.js';

// 02 "Reconciliation rules" through the real management app and PostgreSQL and Redis: reads,
// create, update and delete with receipts, revisions, cursors, the error table, the workspace's
// mutation rate, the one transaction of a mutation (audit and analysis enqueue), the `enabled`
// state table and the Limits at their bounds.

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
    analysisJobs: (await ruleChangeJobs(ctx, connectionId)).length,
  };
}

async function setup(): Promise<{ boot: BootstrapResult; connection: ConnectionFixture }> {
  const boot = await bootstrapWorkspace(ctx);
  return { boot, connection: await insertConnection(ctx, boot) };
}

/** Creates a rule and returns the receipt (the resulting revision is the next expectedRevision). */
async function created(boot: BootstrapResult, connectionId: string, expectedRevision: string, n = 0): Promise<RuleReceipt> {
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
      connectionId: connection.connectionId,
      workspaceIntegrationId: connection.integrationId,
      mode: 'sandbox',
      action: 'rule.create',
      status: 'completed',
      expectedRevision: connection.revision,
      replayed: false,
      historical: false,
      rule: { ...definition(), enabled: false, lastEvaluatedAt: null },
    });
    expect(receipt.operationId).toMatch(/^ruleop_/);
    expect(receipt.rule.id).toMatch(/^rule_/);
    expect(receipt.requestFingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(BigInt(receipt.revision)).toBeGreaterThan(BigInt(connection.revision));
    expect((await readConnectionRow(ctx, connection.connectionId)).revision).toBe(receipt.revision);
    expect(
      await countRows(ctx, 'audit_events', "workspace_id = $1 AND action = 'rule.create' AND target_id = $2", [
        boot.workspace.id,
        receipt.rule.id,
      ]),
    ).toBe(1);

    const read = await callWithKey(ctx, boot.apiKey.key, 'GET', ruleUrl(connection.connectionId, receipt.rule.id));
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      connectionId: connection.connectionId,
      workspaceIntegrationId: connection.integrationId,
      mode: 'sandbox',
      revision: receipt.revision,
      rule: receipt.rule,
    });
  });

  it('updates only the fields sent, enables and disables; delete keeps the removed rule in its receipt', async () => {
    const { boot, connection } = await setup();
    const first = await created(boot, connection.connectionId, connection.revision);
    const ruleId = first.rule.id as string;
    const enabled = await update(boot.apiKey.key, connection.connectionId, ruleId, {
      expectedRevision: first.revision,
      enabled: true,
      maxDelayMs: 5_000,
    });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json()).toMatchObject({
      action: 'rule.update',
      rule: { ...definition(), maxDelayMs: 5_000, enabled: true },
      expectedRevision: first.revision,
    });
    const renamed = await update(boot.apiKey.key, connection.connectionId, ruleId, {
      expectedRevision: enabled.json().revision,
      expectedObjectType: 'parcel:v2',
    });
    expect(renamed.json().rule).toMatchObject({
      sourceEventType: 'order.paid.0',
      expectedObjectType: 'parcel:v2',
      maxDelayMs: 5_000,
      enabled: true,
    });

    const removed = await remove(boot.apiKey.key, connection.connectionId, ruleId, { expectedRevision: renamed.json().revision });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ action: 'rule.delete', rule: renamed.json().rule });
    expect((await callWithKey(ctx, boot.apiKey.key, 'GET', ruleUrl(connection.connectionId, ruleId))).json()).toEqual({
      error: 'expected_outcome_not_found',
    });
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
    expectError(
      await create(boot.apiKey.key, connection.connectionId, { expectedRevision: connection.revision, ...definition(1) }),
      409,
      'connection_configuration_changed',
    );
    expectError(
      await create(boot.apiKey.key, connection.connectionId, { expectedRevision: first.revision, ...definition() }),
      409,
      'expected_outcome_already_exists',
    );
    const second = await created(boot, connection.connectionId, first.revision, 1);
    expectError(
      await update(boot.apiKey.key, connection.connectionId, second.rule.id, {
        expectedRevision: second.revision,
        sourceEventType: 'order.paid.0',
      }),
      409,
      'expected_outcome_already_exists',
    );

    await ctx.deps.pool.query(
      `INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status, resolution_state,
                              summary, affected_records, first_observed_at, last_observed_at, created_at, updated_at, resolved_at, rule_id)
       VALUES ($1, $2, $3, $4, $5, 'sandbox', 'rule', 'expected-outcome-missing', 'resolved', 'active', 'missing shipment', 1, now(), now(), now(), now(), now(), $6)`,
      [newId('inc_'), connection.connectionId, boot.workspace.id, connection.integrationId, connection.environmentId, first.rule.id],
    );
    const withSecond = await writes(boot, connection.connectionId);
    expectError(
      await remove(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: second.revision }),
      409,
      'expected_outcome_has_incident_history',
    );
    expect(await writes(boot, connection.connectionId)).toEqual(withSecond);
    expect(withSecond.rules).toBe(before.rules + 1);
    // Disabling through a reviewed PATCH is the way out.
    expect(
      (await update(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: second.revision, enabled: false }))
        .statusCode,
    ).toBe(200);
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
    expectError(
      await callWithKey(ctx, boot.apiKey.key, 'POST', rulesUrl(connection.connectionId), { body: base }),
      400,
      'idempotency_key_required',
    );
    expectError(
      await callWithKey(ctx, boot.apiKey.key, 'POST', `${rulesUrl(connection.connectionId)}?dryRun=1`, {
        body: base,
        idempotencyKey: newIdempotencyKey(),
      }),
      400,
      'invalid_rule_request',
    );

    const first = await created(boot, connection.connectionId, connection.revision);
    expectError(
      await update(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: first.revision }),
      400,
      'invalid_rule_request',
    );
    expectError(
      await remove(boot.apiKey.key, connection.connectionId, first.rule.id, { expectedRevision: first.revision, enabled: false }),
      400,
      'invalid_rule_request',
    );
    expectError(
      await update(boot.apiKey.key, connection.connectionId, newId('rule_'), { expectedRevision: first.revision, enabled: true }),
      404,
      'expected_outcome_not_found',
    );
    expectError(
      await update(boot.apiKey.key, connection.connectionId, 'rule_nope', { expectedRevision: first.revision, enabled: true }),
      404,
      'expected_outcome_not_found',
    );

    // Another workspace's connection and rule are not found; a read-only key may read but not change.
    const stranger = await bootstrapWorkspace(ctx);
    expectError(
      await create(stranger.apiKey.key, connection.connectionId, { ...base, expectedRevision: first.revision }),
      404,
      'connection_not_found',
    );
    expectError(
      await callWithKey(ctx, stranger.apiKey.key, 'GET', ruleUrl(connection.connectionId, first.rule.id)),
      404,
      'connection_not_found',
    );
    expectError(await callWithKey(ctx, stranger.apiKey.key, 'GET', `/v1/rule-operations/${first.operationId}`), 404, 'operation_not_found');
    const reader = await bootstrapWorkspace(ctx, { email: boot.user.email, scopes: ['integrations:read'] });
    expect((await callWithKey(ctx, reader.apiKey.key, 'GET', rulesUrl(connection.connectionId))).statusCode).toBe(200);
    expectError(
      await create(reader.apiKey.key, connection.connectionId, { ...base, expectedRevision: first.revision }),
      403,
      'insufficient_scope',
    );
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
      const res: LightMyRequestResponse = await callWithKey(
        ctx,
        boot.apiKey.key,
        'GET',
        `${rulesUrl(sandbox.connectionId)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page).toMatchObject({
        connectionId: sandbox.connectionId,
        workspaceIntegrationId: sandbox.integrationId,
        mode: 'sandbox',
        revision,
      });
      seen.push(...page.rules.map((rule: { id: string }) => rule.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    const page = (await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?limit=2`)).json();
    expectError(
      await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(live.connectionId)}?cursor=${page.nextCursor}`),
      400,
      'invalid_rule_cursor',
    );
    expectError(
      await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?cursor=${page.nextCursor.slice(0, -2)}xx`),
      400,
      'invalid_rule_cursor',
    );
    for (const limit of ['0', '101', '01', 'ten']) {
      expectError(
        await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?limit=${limit}`),
        400,
        'invalid_rule_request',
      );
    }
    await update(boot.apiKey.key, sandbox.connectionId, ids[0], { expectedRevision: revision, enabled: true });
    expectError(
      await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(sandbox.connectionId)}?cursor=${page.nextCursor}`),
      409,
      'rule_cursor_stale',
    );
  });
});

describe('the workspace rate', () => {
  it(`takes ${RULE_MUTATIONS_PER_MINUTE} new mutations a minute, then 429 rate_limited with Retry-After; identical retries are not counted`, async () => {
    const { boot, connection } = await setup();
    let revision = connection.revision;
    const firstKey = newIdempotencyKey();
    const firstBody = { expectedRevision: revision, ...definition(0) };
    for (let n = 0; n < RULE_MUTATIONS_PER_MINUTE; n++) {
      const res =
        n === 0
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

describe('one transaction: rule, revision, receipt, redacted audit and analysis enqueue', () => {
  /**
   * The PostgreSQL transactions (xmin) that wrote the operation, audit row, analysis job, connection
   * revision and rule (not after a delete) of one mutation: there must be exactly one.
   */
  async function expectOneTransaction(connectionId: string, receipt: RuleReceipt): Promise<void> {
    const xmins = async (sql: string, params: unknown[]) =>
      (await ctx.deps.pool.query<{ xmin: string }>(sql, params)).rows.map((row) => row.xmin);
    const written = [
      ...(await xmins('SELECT xmin::text FROM operations WHERE id = $1', [receipt.operationId])),
      ...(await xmins("SELECT xmin::text FROM audit_events WHERE metadata->>'operationId' = $1", [receipt.operationId])),
      ...(await xmins(
        "SELECT xmin::text FROM outbox WHERE topic = 'rule-change' AND payload->>'connectionId' = $1 AND payload->>'revision' = $2",
        [connectionId, receipt.revision],
      )),
      ...(await xmins('SELECT xmin::text FROM connections WHERE id = $1 AND revision = $2', [connectionId, receipt.revision])),
      ...(receipt.action === 'rule.delete'
        ? []
        : await xmins('SELECT xmin::text FROM reconciliation_rules WHERE id = $1', [receipt.rule.id])),
    ];
    expect(written, receipt.action).toHaveLength(receipt.action === 'rule.delete' ? 4 : 5);
    expect(new Set(written).size, receipt.action).toBe(1);
  }

  it('enqueues one rule-change job per create, update and delete with the audit and receipt, and nothing for identical retries', async () => {
    const { boot, connection } = await setup();
    const keys = { create: newIdempotencyKey(), update: newIdempotencyKey(), delete: newIdempotencyKey() };
    const bodies: Record<string, unknown> = { create: { expectedRevision: connection.revision, ...definition() } };
    const first = await create(boot.apiKey.key, connection.connectionId, bodies.create, keys.create);
    expect(first.statusCode, first.body).toBe(201);
    await expectOneTransaction(connection.connectionId, first.json());
    const ruleId = first.json().rule.id as string;

    bodies.update = { expectedRevision: first.json().revision, enabled: true, sourceEventType: 'order.refunded' };
    const updated = await update(boot.apiKey.key, connection.connectionId, ruleId, bodies.update, keys.update);
    expect(updated.statusCode, updated.body).toBe(200);
    await expectOneTransaction(connection.connectionId, updated.json());

    bodies.delete = { expectedRevision: updated.json().revision };
    const removed = await remove(boot.apiKey.key, connection.connectionId, ruleId, bodies.delete, keys.delete);
    expect(removed.statusCode, removed.body).toBe(200);
    await expectOneTransaction(connection.connectionId, removed.json());

    const receipts = [first.json(), updated.json(), removed.json()];
    expect(await ruleChangeJobs(ctx, connection.connectionId)).toEqual(
      receipts.map((receipt) => ({
        connectionId: connection.connectionId,
        ruleId,
        action: receipt.action,
        revision: receipt.revision,
      })),
    );
    // Redacted (docs/decisions/rules.md "Rule storage and mutations"): ids, the resulting revision and `enabled`;
    // never the event and object types, the delay, the request body or the key.
    const audit = await ctx.deps.pool.query(
      "SELECT action, actor_type, actor_id, target_id, metadata FROM audit_events WHERE workspace_id = $1 AND action LIKE 'rule.%' ORDER BY id",
      [boot.workspace.id],
    );
    expect(audit.rows).toEqual(
      receipts.map((receipt) => ({
        action: receipt.action,
        actor_type: 'api_key',
        actor_id: boot.apiKey.id,
        target_id: ruleId,
        metadata: {
          operationId: receipt.operationId,
          connectionId: connection.connectionId,
          revision: receipt.revision,
          enabled: receipt.rule.enabled,
        },
      })),
    );

    const before = await writes(boot, connection.connectionId);
    expect((await create(boot.apiKey.key, connection.connectionId, bodies.create, keys.create)).statusCode).toBe(200);
    expect((await update(boot.apiKey.key, connection.connectionId, ruleId, bodies.update, keys.update)).statusCode).toBe(200);
    expect((await remove(boot.apiKey.key, connection.connectionId, ruleId, bodies.delete, keys.delete)).statusCode).toBe(200);
    expect(await writes(boot, connection.connectionId)).toEqual(before);
  });

  // 02 Authentication 3 and "no partial commit after permission loss": each loss commits on another
  // connection while the mutation's transaction is open, after its writes.
  const actions = ['create', 'update', 'delete'] as const;
  for (const [label, lose, status, code] of apiKeyAuthorityLosses('connection_configuration_changed')) {
    for (const action of actions) {
      it(`rolls back a ${action} when ${label} during it (${status} ${code})`, async () => {
        const { boot, connection } = await setup();
        const existing = await created(boot, connection.connectionId, connection.revision);
        const before = await writes(boot, connection.connectionId);
        const kinds: string[] = [];
        ctx.hooks.beforeAuthorityRecheck = async (kind) => {
          kinds.push(kind);
          await lose(ctx, boot);
        };
        const expectedRevision = existing.revision as string;
        const res =
          action === 'create'
            ? await create(boot.apiKey.key, connection.connectionId, { expectedRevision, ...definition(1) })
            : action === 'update'
              ? await update(boot.apiKey.key, connection.connectionId, existing.rule.id, { expectedRevision, enabled: true })
              : await remove(boot.apiKey.key, connection.connectionId, existing.rule.id, { expectedRevision });
        expect(kinds).toEqual([`rule.${action}`]);
        expectError(res, status, code);
        expect(await writes(boot, connection.connectionId)).toEqual(before);
        expect((await ctx.deps.pool.query('SELECT enabled FROM reconciliation_rules WHERE id = $1', [existing.rule.id])).rows).toEqual([
          { enabled: false },
        ]);
      });
    }
  }
});

describe('Rule `enabled` (02 state table)', () => {
  // [row, from (null: the create row), body fields beyond expectedRevision, to]
  const table: [string, boolean | null, Record<string, unknown>, boolean][] = [
    ['create without enabled → false', null, {}, false],
    ['create with enabled true → true', null, { enabled: true }, true],
    ['create with enabled false → false', null, { enabled: false }, false],
    ['false, PATCH enabled true → true', false, { enabled: true }, true],
    ['false, PATCH enabled false → false', false, { enabled: false }, false],
    ['true, PATCH enabled false → false', true, { enabled: false }, false],
    ['true, PATCH enabled true → true', true, { enabled: true }, true],
    ['false, PATCH without enabled → unchanged', false, { maxDelayMs: 5_000 }, false],
    ['true, PATCH without enabled → unchanged', true, { maxDelayMs: 5_000 }, true],
  ];

  it.each(table)('%s', async (_label, from, sent, to) => {
    const boot = await bootstrapWorkspace(ctx);
    const { sandbox, live } = await insertConnections(ctx, boot, ['sandbox', 'live']);
    // The other mode's connection holds the same pair in the opposite state: it must not move.
    const other = (
      await create(boot.apiKey.key, live.connectionId, { expectedRevision: live.revision, ...definition(), enabled: !to })
    ).json();
    let receipt: RuleReceipt;
    if (from === null) {
      const res = await create(boot.apiKey.key, sandbox.connectionId, { expectedRevision: sandbox.revision, ...definition(), ...sent });
      expect(res.statusCode, res.body).toBe(201);
      receipt = res.json();
    } else {
      const rule = (
        await create(boot.apiKey.key, sandbox.connectionId, { expectedRevision: sandbox.revision, ...definition(), enabled: from })
      ).json();
      expect(rule.rule.enabled).toBe(from);
      const res = await update(boot.apiKey.key, sandbox.connectionId, rule.rule.id, { expectedRevision: rule.revision, ...sent });
      expect(res.statusCode, res.body).toBe(200);
      receipt = res.json();
    }
    expect(receipt.rule.enabled).toBe(to);
    expect((await callWithKey(ctx, boot.apiKey.key, 'GET', ruleUrl(sandbox.connectionId, receipt.rule.id))).json().rule.enabled).toBe(to);
    expect((await callWithKey(ctx, boot.apiKey.key, 'GET', ruleUrl(live.connectionId, other.rule.id))).json().rule).toEqual(other.rule);
    // Only this connection's analysis is told of the change.
    expect((await ruleChangeJobs(ctx, live.connectionId)).map((job) => job.action)).toEqual(['rule.create']);
    expect((await ruleChangeJobs(ctx, sandbox.connectionId)).at(-1)).toEqual({
      connectionId: sandbox.connectionId,
      ruleId: receipt.rule.id,
      action: receipt.action,
      revision: receipt.revision,
    });
  });
  // "A copied rule is always created disabled" is test/configurationCopy.test.ts's and test/connectionSetup.test.ts's.
});

describe('limits at their bounds (02 Limits)', () => {
  it('lists 25 rules by default and up to 100 with `limit`; 0 and 101 are refused', async () => {
    const { boot, connection } = await setup();
    // 101 rules are more than a workspace's minute of mutations: the list reads them straight from SQL.
    const ids = Array.from({ length: 101 }, () => newId('rule_'));
    const base = ctx.deps.clock.nowMs();
    await ctx.deps.pool.query(
      `INSERT INTO reconciliation_rules (id, connection_id, workspace_id, source_event_type, expected_object_type, max_delay_ms, enabled, created_at, updated_at)
       SELECT id, $2, $3, 'order.paid.' || n, 'shipment', 60000, false, to_timestamp(($4::bigint + n) / 1000.0), to_timestamp(($4::bigint + n) / 1000.0)
         FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n)`,
      [ids, connection.connectionId, boot.workspace.id, base],
    );
    const list = async (query: string) => {
      const res = await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(connection.connectionId)}${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { rules: { id: string }[]; nextCursor: string | null };
    };
    const pages: [query: string, first: number, count: number, more: boolean][] = [
      ['', 0, 25, true],
      ['?limit=1', 0, 1, true],
      ['?limit=25', 0, 25, true],
      ['?limit=100', 0, 100, true],
    ];
    for (const [query, first, count, more] of pages) {
      const page = await list(query);
      expect(
        page.rules.map((rule) => rule.id),
        query,
      ).toEqual(ids.slice(first, first + count));
      expect(page.nextCursor !== null, query).toBe(more);
    }
    const last = await list(`?limit=100&cursor=${(await list('?limit=100')).nextCursor}`);
    expect(last).toMatchObject({ rules: [{ id: ids[100] }], nextCursor: null });
    for (const limit of ['0', '101']) {
      expectError(
        await callWithKey(ctx, boot.apiKey.key, 'GET', `${rulesUrl(connection.connectionId)}?limit=${limit}`),
        400,
        'invalid_rule_request',
      );
    }
  });

  const longest = `${'a'.repeat(119)}Z`;
  // [label, definition fields, accepted]
  const values: [string, Record<string, unknown>, boolean][] = [
    ['maxDelayMs 1,000', { maxDelayMs: 1_000 }, true],
    ['maxDelayMs 86,400,000', { maxDelayMs: 86_400_000 }, true],
    ['maxDelayMs 999', { maxDelayMs: 999 }, false],
    ['maxDelayMs 86,400,001', { maxDelayMs: 86_400_001 }, false],
    ['sourceEventType of 1 character', { sourceEventType: 'o' }, true],
    ['sourceEventType of 120 characters', { sourceEventType: longest }, true],
    ['sourceEventType of 121 characters', { sourceEventType: `${longest}b` }, false],
    ['sourceEventType empty', { sourceEventType: '' }, false],
    ['expectedObjectType of 1 character', { expectedObjectType: 's' }, true],
    ['expectedObjectType of 120 characters', { expectedObjectType: longest }, true],
    ['expectedObjectType of 121 characters', { expectedObjectType: `${longest}b` }, false],
    ['expectedObjectType empty', { expectedObjectType: '' }, false],
    ['every allowed character', { sourceEventType: 'Aa0.b_c:d-e', expectedObjectType: 'Zz9-y:x_w.v' }, true],
  ];

  it.each(values)('%s on create and on PATCH', async (_label, fields, accepted) => {
    const { boot, connection } = await setup();
    const base = await created(boot, connection.connectionId, connection.revision, 1);
    const before = await writes(boot, connection.connectionId);
    const onCreate = await create(boot.apiKey.key, connection.connectionId, {
      expectedRevision: base.revision,
      ...definition(2),
      ...fields,
    });
    if (!accepted) {
      expectError(onCreate, 400, 'invalid_rule_request');
      expectError(
        await update(boot.apiKey.key, connection.connectionId, base.rule.id, { expectedRevision: base.revision, ...fields }),
        400,
        'invalid_rule_request',
      );
      expect(await writes(boot, connection.connectionId)).toEqual(before);
      return;
    }
    expect(onCreate.statusCode, onCreate.body).toBe(201);
    expect(onCreate.json().rule).toMatchObject(fields);
    const onUpdate = await update(boot.apiKey.key, connection.connectionId, base.rule.id, {
      expectedRevision: onCreate.json().revision,
      ...fields,
      expectedObjectType: 'parcel',
    });
    expect(onUpdate.statusCode, onUpdate.body).toBe(200);
    expect(onUpdate.json().rule).toMatchObject({ ...fields, expectedObjectType: 'parcel' });
  });

  // [label, Idempotency-Key, accepted]: 8 to 128 printable, non-space ASCII characters.
  const keys: [string, string, boolean][] = [
    ['8 characters', 'k!~#$%&*', true],
    ['128 characters', `${'k'.repeat(120)}${'!"#$%&/~'}`, true],
    ['7 characters', 'k'.repeat(7), false],
    ['129 characters', 'k'.repeat(129), false],
    ['a space inside', 'idem key-1234', false],
    ['a tab inside', 'idem\tkey-1234', false],
  ];

  it.each(keys)('an Idempotency-Key of %s', async (_label, idempotencyKey, accepted) => {
    const { boot, connection } = await setup();
    const existing = await created(boot, connection.connectionId, connection.revision);
    const revision = existing.revision as string;
    if (accepted) {
      const res = await create(boot.apiKey.key, connection.connectionId, { expectedRevision: revision, ...definition(1) }, idempotencyKey);
      expect(res.statusCode, res.body).toBe(201);
      expect(
        (await create(boot.apiKey.key, connection.connectionId, { expectedRevision: revision, ...definition(1) }, idempotencyKey)).json(),
      ).toEqual({ ...res.json(), replayed: true });
      return;
    }
    const before = await writes(boot, connection.connectionId);
    expectError(
      await create(boot.apiKey.key, connection.connectionId, { expectedRevision: revision, ...definition(1) }, idempotencyKey),
      400,
      'idempotency_key_required',
    );
    expectError(
      await update(
        boot.apiKey.key,
        connection.connectionId,
        existing.rule.id,
        { expectedRevision: revision, enabled: true },
        idempotencyKey,
      ),
      400,
      'idempotency_key_required',
    );
    expectError(
      await remove(boot.apiKey.key, connection.connectionId, existing.rule.id, { expectedRevision: revision }, idempotencyKey),
      400,
      'idempotency_key_required',
    );
    expect(await writes(boot, connection.connectionId)).toEqual(before);
  });
});

describe('`historical` on a rule receipt', () => {
  // What happens to the connection after the mutation, and how.
  const changes: [string, (boot: BootstrapResult, connection: ConnectionFixture, receipt: RuleReceipt) => Promise<unknown>][] = [
    [
      'its revision moved',
      (boot, connection, receipt) =>
        update(boot.apiKey.key, connection.connectionId, receipt.rule.id, { expectedRevision: receipt.revision, enabled: true }),
    ],
    [
      'the connection was deleted',
      (_b, connection) => ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [connection.connectionId]),
    ],
    [
      'its Integration was deleted',
      (_b, connection) => ctx.deps.pool.query('UPDATE integrations SET deleted_at = now() WHERE id = $1', [connection.integrationId]),
    ],
  ];

  it.each(changes)('is true on the status read and the identical retry once %s', async (_label, change) => {
    const { boot, connection } = await setup();
    const key = newIdempotencyKey();
    const body = { expectedRevision: connection.revision, ...definition() };
    const first = (await create(boot.apiKey.key, connection.connectionId, body, key)).json();
    const read = () => callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/rule-operations/${first.operationId}`);
    expect((await read()).json()).toEqual({ ...first, replayed: true, historical: false });
    await change(boot, connection, first);
    const recovered = await read();
    expect(recovered.statusCode, recovered.body).toBe(200);
    expect(recovered.json()).toEqual({ ...first, replayed: true, historical: true });
    const retry = await create(boot.apiKey.key, connection.connectionId, body, key);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json()).toEqual({ ...first, replayed: true, historical: true });
  });
});

describe('authentication and workspace errors on every rule route (02 Rules error table)', () => {
  type RouteCall = (key: string | null, connectionId: string, ruleId: string, operationId: string) => Promise<LightMyRequestResponse>;
  const body = { expectedRevision: '1', ...definition(7) };
  const routes: [string, RouteCall][] = [
    ['list', (key, c) => callWithKey(ctx, key, 'GET', rulesUrl(c))],
    ['read', (key, c, r) => callWithKey(ctx, key, 'GET', ruleUrl(c, r))],
    ['create', (key, c) => create(key as string, c, body)],
    ['update', (key, c, r) => update(key as string, c, r, { expectedRevision: '1', enabled: true })],
    ['delete', (key, c, r) => remove(key as string, c, r, { expectedRevision: '1' })],
    ['rule-operations read', (key, _c, _r, o) => callWithKey(ctx, key, 'GET', `/v1/rule-operations/${o}`)],
  ];
  const readRoutes = new Set(['list', 'read']);

  /** A workspace with a rule and its receipt, and a second key of the same workspace for the caller to spoil. */
  async function ruleFixture() {
    const { boot, connection } = await setup();
    const receipt = await created(boot, connection.connectionId, connection.revision);
    const sibling = await bootstrapWorkspace(ctx, { email: boot.user.email });
    expect(sibling.workspace.id).toBe(boot.workspace.id);
    return { boot, connection, receipt, sibling };
  }

  // The callers a workspace API key route does not authenticate (01 Authentication: all 401).
  const unauthenticated: [string, (f: Awaited<ReturnType<typeof ruleFixture>>) => Promise<string | null>][] = [
    ['no Authorization header', async () => null],
    ['a malformed key', async () => 'svc_api_short'],
    ['an unknown key', async () => `svc_api_${'A'.repeat(43)}`],
    [
      'a revoked key',
      async (f) => {
        await ctx.deps.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [f.sibling.apiKey.id]);
        return f.sibling.apiKey.key;
      },
    ],
    [
      'an expired key',
      async (f) => {
        await ctx.deps.pool.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [f.sibling.apiKey.id]);
        return f.sibling.apiKey.key;
      },
    ],
    [
      'the key of an archived workspace',
      async () => {
        const archived = await bootstrapWorkspace(ctx);
        await ctx.deps.pool.query("UPDATE workspaces SET status = 'archived', archived_at = now() WHERE id = $1", [archived.workspace.id]);
        return archived.apiKey.key;
      },
    ],
  ];

  it.each(unauthenticated)('401 unauthenticated for %s, writing nothing', async (_label, keyFor) => {
    const f = await ruleFixture();
    const key = await keyFor(f);
    const before = await writes(f.boot, f.connection.connectionId);
    for (const [label, route] of routes) {
      const res = await route(key, f.connection.connectionId, f.receipt.rule.id, f.receipt.operationId);
      expect(res.statusCode, `${label}: ${res.body}`).toBe(401);
      expect(res.json(), label).toEqual({ error: 'unauthenticated' });
    }
    expect(await writes(f.boot, f.connection.connectionId)).toEqual(before);
  });

  it('403 insufficient_scope: integrations:read cannot mutate nor read receipts; a key without it cannot read', async () => {
    const f = await ruleFixture();
    const scoped = async (scopes: string) => {
      await ctx.deps.pool.query('UPDATE api_keys SET scopes = $2 WHERE id = $1', [f.sibling.apiKey.id, `{${scopes}}`]);
      return f.sibling.apiKey.key;
    };
    const before = await writes(f.boot, f.connection.connectionId);
    for (const [scopes, refused] of [
      ['integrations:read', (label: string) => !readRoutes.has(label)],
      ['contracts:read,incidents:read', () => true],
    ] as const) {
      const key = await scoped(scopes);
      for (const [label, route] of routes) {
        const res = await route(key, f.connection.connectionId, f.receipt.rule.id, f.receipt.operationId);
        if (refused(label)) expectError(res, 403, 'insufficient_scope');
        else expect(res.statusCode, `${scopes} ${label}: ${res.body}`).toBe(200);
      }
    }
    expect(await writes(f.boot, f.connection.connectionId)).toEqual(before);
  });

  it('409 workspace_modes_unavailable for a legacy workspace’s key on every route, writing nothing', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id);
    const staging = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'staging' });
    const legacyBody = { expectedRevision: staging.revision, ...definition() };
    const operations = () => countRows(ctx, 'operations', 'workspace_id = $1', [legacy.workspace.id]);
    for (const [label, route] of routes) {
      const res =
        label === 'create'
          ? await create(legacy.apiKey.key, staging.connectionId, legacyBody)
          : await route(legacy.apiKey.key, staging.connectionId, newId('rule_'), newId('ruleop_'));
      expect(res.statusCode, `${label}: ${res.body}`).toBe(409);
      expect(res.json(), label).toEqual({ error: 'workspace_modes_unavailable' });
    }
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [staging.connectionId])).toBe(0);
    expect(await operations()).toBe(0);
    expect(await ruleChangeJobs(ctx, staging.connectionId)).toEqual([]);
    expect((await readConnectionRow(ctx, staging.connectionId)).revision).toBe(staging.revision);
  });
  // 409 workspace_unavailable through an API key: the workspace archived during a mutation (the
  // authority-loss table above). A key presented after archival is 401 (table above, 01 Authentication).
});
