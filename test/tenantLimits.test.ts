import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Counter } from 'prom-client';
import { clickHouseErrorCode, createClickHouseReader, isClickHouseOverload, type ClickHouseClient } from '../shared/clickhouse/client.js';
import { CLICKHOUSE_BUSY_RETRY_AFTER_SECONDS } from '../management/plugins/errorHandler.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { startAnalyzer } from './helpers/analyzer.js';
import { readConnectionRow } from './helpers/connections.js';
import { bootstrapWorkspace, callWithKey, countRows, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { activateOk, activateVersion, contractState, queueRegistration, registerDraft, registerVersion } from './helpers/contracts.js';
import { createCollector, type Collector } from './helpers/ingest.js';
import { createRuleWithKey } from './helpers/rules.js';
import { waitFor } from './helpers/wait.js';

// Issue 25, item 7: per-tenant limits on the shared processes, each configured small enough to
// reach (docs/decisions/operations.md "Limits on shared ClickHouse reads", and the limits in rules.md and contracts.md).

const GIB = 1024 ** 3;

describe('ClickHouse reads carry server-side limits', () => {
  let ctx: TestContext;
  let boot: BootstrapResult;
  let collector: Collector;

  beforeAll(async () => {
    // One byte of memory: every read goes past it, deterministically.
    ctx = await createTestContext({ MANAGEMENT_CLICKHOUSE_MAX_MEMORY_BYTES: '1' });
    boot = await bootstrapWorkspace(ctx);
    collector = await createCollector(ctx, boot.apiKey.key, { protocol: 'queue', name: 'Limited reads' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const expectBusy = (res: { statusCode: number; body: string; headers: Record<string, unknown>; json(): unknown }) => {
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toEqual({ error: 'service_unavailable' });
    expect(res.headers['retry-after']).toBe(String(CLICKHOUSE_BUSY_RETRY_AFTER_SECONDS));
  };

  it('answers an observation list and analytics past the memory limit with 503 service_unavailable and Retry-After', async () => {
    expectBusy(await callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/observations?integrationId=${collector.connectionId}`));
    expectBusy(await callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/connections/${collector.connectionId}/analytics`));
  });

  it('answers a contract impact read (shared analysis code) past the limit with 503, not 500', async () => {
    const draft = await registerDraft(ctx, boot.apiKey.key, collector.connectionId, queueRegistration('impact-1'));
    expectBusy(
      await callWithKey(ctx, boot.apiKey.key, 'GET', `/v1/integrations/${collector.connectionId}/contracts/${draft.contract.id}/impact`),
    );
  });

  it('stops a read at max_execution_time on the server, with an error code rather than a truncated 200', async () => {
    const reader = createClickHouseReader(ctx.deps.config.clickhouseUrl, ctx.deps.config.clickhouseDatabase, {
      maxExecutionSeconds: 1,
      maxMemoryBytes: GIB,
    });
    try {
      // Endless, and streams megabytes of rows before the limit: only the server's time limit ends
      // it, and only a buffered answer turns the limit into an HTTP error the client can read.
      const read = reader
        .query({ query: 'SELECT number FROM system.numbers WHERE number % 1000 = 0', format: 'JSONEachRow' })
        .then((rows) => rows.json());
      const error = await read.then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(isClickHouseOverload(error), String(error)).toBe(true);
      expect(clickHouseErrorCode(error)).toBe('159');
    } finally {
      await reader.close();
    }
  });
});

describe('the analyzer under read limits', () => {
  let ctx: TestContext;
  let reader: ClickHouseClient;
  const stream = `analysis:jobs:limits-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    ctx = await createTestContext();
    reader = createClickHouseReader(ctx.deps.config.clickhouseUrl, ctx.deps.config.clickhouseDatabase, {
      maxExecutionSeconds: 5,
      maxMemoryBytes: 1,
    });
  });
  afterAll(async () => {
    await ctx.deps.redis.del(stream);
    await reader.close();
    await ctx.close();
  });

  it('leaves the jobs of a refused read pending, analysed one connection at a time, and commits nothing for them', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const first = await createCollector(ctx, boot.apiKey.key, { protocol: 'queue', name: 'Tenant one' });
    const second = await createCollector(ctx, boot.apiKey.key, { protocol: 'queue', name: 'Tenant two' });
    const batchIds = [first, second].map(() => `bat_${randomBytes(8).toString('hex')}`);
    for (const [i, collector] of [first, second].entries()) {
      await ctx.deps.redis.xadd(
        stream,
        '*',
        'connectionId',
        collector.connectionId,
        'workspaceId',
        boot.workspace.id,
        'mode',
        'sandbox',
        'batchId',
        batchIds[i],
        'receivedAtMs',
        String(ctx.deps.clock.nowMs()),
        'eventIds',
        `evt_${randomBytes(8).toString('hex')}`,
      );
    }
    const running = await startAnalyzer(ctx, reader, { stream });
    try {
      const jobs = running.metrics.getSingleMetric('analyzer_jobs_total') as Counter;
      // The round of both jobs failed, then each connection's own round failed: two refusals.
      await waitFor(
        async () => {
          const refused = (await jobs.get()).values.find((value) => value.labels.outcome === 'read_refused')?.value ?? 0;
          return refused >= 2 ? true : undefined;
        },
        15_000,
        "both connections' reads refused",
      );
    } finally {
      await running.stop();
    }
    const pending = (await ctx.deps.redis.xpending(stream, 'analyzers')) as [number, ...unknown[]];
    expect(Number(pending[0])).toBe(2);
    expect(await countRows(ctx, 'analysed_batches', 'batch_id = ANY($1)', [batchIds])).toBe(0);
  });
});

describe('reconciliation rules per connection', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext({ RULES_PER_CONNECTION: '3' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const definition = (i: number) => ({ sourceEventType: `order.created.${i}`, expectedObjectType: 'invoice', maxDelayMs: 60_000 });

  it('refuses the rule past the cap with 409 expected_outcome_limit_reached and creates nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { name: 'Capped rules' });
    for (let i = 0; i < 3; i += 1) await createRuleWithKey(ctx, boot.apiKey.key, collector.connectionId, definition(i));
    const before = await readConnectionRow(ctx, collector.connectionId);
    const idempotencyKey = newIdempotencyKey();
    const res = await callWithKey(ctx, boot.apiKey.key, 'POST', `/v1/connections/${collector.connectionId}/reconciliation-rules`, {
      idempotencyKey,
      body: { expectedRevision: before.revision, ...definition(3) },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toEqual({ error: 'expected_outcome_limit_reached', limit: 3 });
    expect(await countRows(ctx, 'reconciliation_rules', 'connection_id = $1', [collector.connectionId])).toBe(3);
    expect((await readConnectionRow(ctx, collector.connectionId)).revision).toBe(before.revision);
    expect(await countRows(ctx, 'operations', 'idempotency_key = $1', [idempotencyKey])).toBe(0);
    // Another connection has a cap of its own.
    const other = await createCollector(ctx, boot.apiKey.key, { name: 'Other rules' });
    await createRuleWithKey(ctx, boot.apiKey.key, other.connectionId, definition(3));
  });
});

describe('contract registration and activation rate per workspace', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestContext({ CONTRACT_REGISTRATIONS_PER_MIN: '3', CONTRACT_ACTIVATIONS_PER_MIN: '2' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  function expectRateLimited(res: { statusCode: number; body: string; headers: Record<string, unknown>; json(): unknown }): void {
    expect(res.statusCode, res.body).toBe(429);
    expect(res.json()).toEqual({ error: 'rate_limited' });
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, String(res.headers['retry-after'])).toBe(true);
  }

  it('answers the registration past the budget with 429 rate_limited and Retry-After, registering nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { protocol: 'queue', name: 'Busy registrations' });
    for (let i = 1; i <= 3; i += 1) await registerDraft(ctx, boot.apiKey.key, collector.connectionId, queueRegistration(`v${i}`));
    const before = await contractState(ctx, collector.connectionId);
    expectRateLimited(await registerVersion(ctx, boot.apiKey.key, collector.connectionId, queueRegistration('v4')));
    expect(await contractState(ctx, collector.connectionId)).toEqual(before);
    // The budget is the workspace's: another workspace registers.
    const other = await bootstrapWorkspace(ctx);
    const otherCollector = await createCollector(ctx, other.apiKey.key, { protocol: 'queue', name: 'Quiet registrations' });
    await registerDraft(ctx, other.apiKey.key, otherCollector.connectionId, queueRegistration('v1'));
  });

  it('answers the activation or rollback past the budget with 429 rate_limited and Retry-After, activating nothing', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { protocol: 'queue', name: 'Busy activations' });
    const v1 = (await registerDraft(ctx, boot.apiKey.key, collector.connectionId, queueRegistration('v1'))).contract.id;
    const v2 = (await registerDraft(ctx, boot.apiKey.key, collector.connectionId, queueRegistration('v2'))).contract.id;
    await activateOk(ctx, boot.apiKey.key, collector.connectionId, v1, { expectedActiveContractVersionId: null, reason: 'promote' });
    await activateOk(ctx, boot.apiKey.key, collector.connectionId, v2, { expectedActiveContractVersionId: v1, reason: 'promote' });
    const before = await contractState(ctx, collector.connectionId);
    expectRateLimited(
      await activateVersion(ctx, boot.apiKey.key, collector.connectionId, v1, { expectedActiveContractVersionId: v2, reason: 'rollback' }),
    );
    expect(await contractState(ctx, collector.connectionId)).toEqual(before);
  });
});
