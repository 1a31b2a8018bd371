import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RECEIPT_TO_ADMISSION_MAX_MS } from '../shared/admissionTiming.js';
import type { ClickHouseClient } from '@clickhouse/client';
import { advanceTestClock, resetTestClock } from '../shared/clock.js';
import { RedisKeys } from '../shared/redis.js';
import { batchIdsOfWindow } from '../shared/analysis/observationGroups.js';
import { StreamTime } from '../analyzer/streamTime.js';
import { startAnalyzer, streamDrained, findingsOf, incidentsOf, reanalysed, type RunningAnalyzer } from './helpers/analyzer.js';
import { readConnectionRow } from './helpers/connections.js';
import { bootstrapWorkspace, callWithKey, createTestContext, newIdempotencyKey, type TestContext } from './helpers/context.js';
import { activateOk, openApiRegistration, registerDraft } from './helpers/contracts.js';
import {
  createCollector,
  envelope,
  ManualClock,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
} from './helpers/ingest.js';
import { spawnProcess, type SpawnedProcess } from './helpers/processes.js';
import { waitFor } from './helpers/wait.js';

// 00-decisions §5 "Reconciliation" and issue 16 item 6, against the running analyzer, the real
// edge and the stores: a source observation of an enabled rule is satisfied by a later outcome
// of the expected type with the same correlation hash within maxDelayMs; otherwise, once the
// delay has passed by the service clock (the operator test clock here) and stream time, one
// `expected-outcome-missing` incident per (connection, rule).

const DELAY_MS = 5_000;
/** The analyzer's stream-time grace in these tests. */
const GRACE_MS = RECEIPT_TO_ADMISSION_MAX_MS;
/** Moves the service clock past every deadline of a source sent now. */
const PAST_DUE_MS = DELAY_MS + GRACE_MS + 2_000;

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let apiKey: string;
let analyzer: RunningAnalyzer | null = null;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  await ctx.deps.redis.del(RedisKeys.analysisJobs);
  // Batches other files' edges left unsettled, or durable with no analyzer to take them, hold
  // stream time back (as they must), and those edges are gone: only this file's batches count here.
  // Two slots on a Redis Cluster: one key per command.
  await ctx.deps.redis.del(RedisKeys.pendingAdmissions);
  await ctx.deps.redis.del(RedisKeys.unanalysedBatches);
  await resetTestClock(ctx.deps.redis);
  edge = await startEdge(ctx, clickhouse, { clock: 'shared' });
  apiKey = (await bootstrapWorkspace(ctx)).apiKey.key;
});

afterEach(async () => {
  await analyzer?.stop();
  analyzer = null;
  await resetTestClock(ctx.deps.redis);
});

afterAll(async () => {
  await edge?.close();
  await clickhouse?.close();
  await ctx?.close();
});

const analyzerOptions = { rulePollMs: 50, ruleGraceMs: GRACE_MS, roundIntervalMs: 20 };

async function runAnalyzer(options: { paused?: boolean } = {}): Promise<RunningAnalyzer> {
  await analyzer?.stop();
  // No read loop: stream entries wait, while deadlines are still looked at (a paused analyzer).
  analyzer = await startAnalyzer(ctx, clickhouse, { ...analyzerOptions, ...(options.paused ? { concurrency: 0 } : {}) });
  return analyzer;
}

interface Rule {
  id: string;
}

async function ruleOn(collector: Collector, body: { enabled: boolean; expectedObjectType?: string }): Promise<Rule> {
  const { revision } = await readConnectionRow(ctx, collector.connectionId);
  const res = await callWithKey(ctx, apiKey, 'POST', `/v1/connections/${collector.connectionId}/reconciliation-rules`, {
    idempotencyKey: newIdempotencyKey(),
    body: {
      expectedRevision: revision,
      sourceEventType: 'payment.succeeded',
      expectedObjectType: body.expectedObjectType ?? 'invoice',
      maxDelayMs: DELAY_MS,
      enabled: body.enabled,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().rule;
}

async function patchRule(collector: Collector, rule: Rule, changes: Record<string, unknown>): Promise<void> {
  const { revision } = await readConnectionRow(ctx, collector.connectionId);
  const res = await callWithKey(ctx, apiKey, 'PATCH', `/v1/connections/${collector.connectionId}/reconciliation-rules/${rule.id}`, {
    idempotencyKey: newIdempotencyKey(),
    body: { expectedRevision: revision, ...changes },
  });
  expect(res.statusCode, res.body).toBe(200);
}

/** A running analyzer, a new connection and a rule on it. */
async function ruleInRunningAnalyzer(body: { enabled: boolean } = { enabled: true }): Promise<{ collector: Collector; rule: Rule }> {
  await runAnalyzer();
  const collector = await createCollector(ctx, apiKey);
  return { collector, rule: await ruleOn(collector, body) };
}

const setEnabled = (collector: Collector, rule: Rule, enabled: boolean) => patchRule(collector, rule, { enabled });

/** A source observation: the rule's event type, correlated by `hash`, itself of another object type. */
function source(collector: Collector, hash: string): Record<string, unknown> {
  return envelope(collector, {
    eventType: 'payment.succeeded',
    correlation: { sourceEventIdHash: hash, hashNamespace: 'payments' },
    outcome: { accepted: true, businessObjectType: 'payment', businessObjectIdHash: 'hmac:p1' },
  });
}

/** An outcome observation of `objectType` correlated by `hash`, occurring `afterMs` after now. */
function outcome(collector: Collector, hash: string, objectType = 'invoice', afterMs = 100): Record<string, unknown> {
  return envelope(collector, {
    eventType: 'invoice.created',
    occurredAt: new Date(Date.now() + afterMs).toISOString(),
    correlation: { sourceEventIdHash: hash, hashNamespace: 'payments' },
    outcome: { accepted: true, businessObjectType: objectType, businessObjectIdHash: 'hmac:i1' },
  });
}

async function send(collector: Collector, envelopes: Record<string, unknown>[]): Promise<void> {
  const answer = await sendEnvelopes(edge, collector, envelopes);
  expect(answer.status, answer.text).toBe(202);
}

const drained = () => waitFor(async () => ((await streamDrained(ctx)) ? true : undefined), 30_000, 'the analysis stream to drain');

async function deadlinesOf(rule: Rule): Promise<number> {
  const { rows } = await ctx.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM rule_deadlines WHERE rule_id = $1', [rule.id]);
  return Number(rows[0].n);
}

async function ruleIncidents(collector: Collector) {
  return (await incidentsOf(ctx, collector.connectionId)).filter((incident) => incident.kind === 'expected-outcome-missing');
}

/** Waits until the connection's rule incident counts `affected` records. */
const ruleIncidentAffects = (collector: Collector, affected: number, what: string, timeoutMs = 15_000) =>
  waitFor(async () => ((await ruleIncidents(collector))[0]?.affected_records === String(affected) ? true : undefined), timeoutMs, what);

/** Waits until the backlog is analysed and the analyzer has looked at due deadlines a few times. */
async function settle(): Promise<void> {
  await drained();
  await new Promise((done) => setTimeout(done, 20 * analyzerOptions.rulePollMs));
}

/** Sends the sources, waits until their deadlines are stored, and moves the clock past them. */
async function sourcesPastDue(
  collector: Collector,
  rule: Rule,
  envelopes: Record<string, unknown>[],
  expectedDeadlines: number,
): Promise<void> {
  await send(collector, envelopes);
  await drained();
  expect(await deadlinesOf(rule)).toBe(expectedDeadlines);
  await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
}

describe('rule evaluation in the running analyzer', () => {
  it('a source without an outcome opens one incident after the delay, and a second one joins it', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    const first = source(collector, 'hmac:lonely-1');
    await sourcesPastDue(collector, rule, [first], 1);
    const [incident] = await waitFor(
      async () => {
        const list = await ruleIncidents(collector);
        return list.length > 0 ? list : undefined;
      },
      15_000,
      'the missing outcome incident',
    );
    expect(incident).toMatchObject({
      operation_key: `rule:${rule.id}`,
      status: 'open',
      affected_records: '1',
      observation_ids: [first.eventId],
    });
    const {
      rows: [row],
    } = await ctx.deps.pool.query('SELECT rule_id FROM incidents WHERE id = $1', [incident.id]);
    expect(row.rule_id).toBe(rule.id);
    const [finding] = await findingsOf(ctx, incident.id);
    expect(finding).toMatchObject({
      kind: 'expected-outcome-missing',
      path: '',
      expected: `invoice within ${DELAY_MS} ms of payment.succeeded`,
      observation_count: '1',
    });
    expect(await deadlinesOf(rule)).toBe(0);
    const {
      rows: [evaluated],
    } = await ctx.deps.pool.query('SELECT last_evaluated_at FROM reconciliation_rules WHERE id = $1', [rule.id]);
    expect(evaluated.last_evaluated_at).not.toBeNull();

    await resetTestClock(ctx.deps.redis);
    const second = source(collector, 'hmac:lonely-2');
    await sourcesPastDue(collector, rule, [second], 1);
    await ruleIncidentAffects(collector, 2, 'the second source on the same incident');
    const incidents = await ruleIncidents(collector);
    expect(incidents).toHaveLength(1);
    expect([...incidents[0].observation_ids].sort()).toEqual([first.eventId, second.eventId].sort());
    // The delete receipt of a rule with incident history is refused (02).
    const { revision } = await readConnectionRow(ctx, collector.connectionId);
    const res = await callWithKey(ctx, apiKey, 'DELETE', `/v1/connections/${collector.connectionId}/reconciliation-rules/${rule.id}`, {
      idempotencyKey: newIdempotencyKey(),
      body: { expectedRevision: revision },
    });
    expect(res.json()).toMatchObject({ error: 'expected_outcome_has_incident_history' });
  });

  it('an outcome within the delay satisfies its source, in the same batch or a later one', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    await send(collector, [source(collector, 'hmac:together'), outcome(collector, 'hmac:together')]);
    await send(collector, [source(collector, 'hmac:later')]);
    await drained();
    expect(await deadlinesOf(rule)).toBe(1);
    // The outcome arrives in a later batch, before the deadline by the service clock.
    await send(collector, [outcome(collector, 'hmac:later', 'invoice', 1_000)]);
    await drained();
    expect(await deadlinesOf(rule)).toBe(0);
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    await settle();
    expect(await deadlinesOf(rule)).toBe(0);
    expect(await ruleIncidents(collector)).toEqual([]);
  });

  it('an outcome analysed before its source (another batch, received first) satisfies it too', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    const early = outcome(collector, 'hmac:early', 'invoice', 500);
    await send(collector, [early]);
    await drained();
    await sourcesPastDue(collector, rule, [source(collector, 'hmac:early')], 1);
    await settle();
    await waitFor(async () => ((await deadlinesOf(rule)) === 0 ? true : undefined), 15_000, 'the deadline to be cleared');
    expect(await ruleIncidents(collector)).toEqual([]);
  });

  it('an outcome with another hash, of another object type, or after the delay does not satisfy it', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    const sources = [source(collector, 'hmac:a'), source(collector, 'hmac:b'), source(collector, 'hmac:c')];
    await send(collector, sources);
    await drained();
    await send(collector, [
      outcome(collector, 'hmac:other'), // another hash
      outcome(collector, 'hmac:b', 'receipt'), // another object type
      outcome(collector, 'hmac:c', 'invoice', DELAY_MS + 1_000), // too late
    ]);
    await drained();
    expect(await deadlinesOf(rule)).toBe(3);
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS + 1_000);
    await ruleIncidentAffects(collector, 3, 'three missing outcomes');
    expect([...(await ruleIncidents(collector))[0].observation_ids].sort()).toEqual(sources.map((s) => s.eventId as string).sort());
  });

  it('a disabled rule never fires; disabling a rule drops its open deadlines; enabling applies from then on', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer({ enabled: false });
    await sourcesPastDue(collector, rule, [source(collector, 'hmac:off')], 0);
    await settle();
    expect(await ruleIncidents(collector)).toEqual([]);

    await resetTestClock(ctx.deps.redis);
    await setEnabled(collector, rule, true);
    await send(collector, [source(collector, 'hmac:on')]);
    await drained();
    expect(await deadlinesOf(rule)).toBe(1);
    await setEnabled(collector, rule, false);
    await waitFor(async () => ((await deadlinesOf(rule)) === 0 ? true : undefined), 15_000, "the disabled rule's deadline to go");
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    await settle();
    expect(await ruleIncidents(collector)).toEqual([]);
  });

  it("a changed pair applies from then on: the old pair's deadlines go, new sources wait for the new type", async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    await send(collector, [source(collector, 'hmac:before-change')]);
    await drained();
    expect(await deadlinesOf(rule)).toBe(1);
    await patchRule(collector, rule, { expectedObjectType: 'receipt' });
    await waitFor(async () => ((await deadlinesOf(rule)) === 0 ? true : undefined), 15_000, "the old pair's deadline to go");
    const unpaired = source(collector, 'hmac:old-type');
    await send(collector, [source(collector, 'hmac:new-type'), unpaired]);
    await send(collector, [outcome(collector, 'hmac:new-type', 'receipt'), outcome(collector, 'hmac:old-type', 'invoice')]);
    // Two analysers may take the sources and the outcomes at once; the deadline then looks for its outcome before firing.
    await drained();
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    await ruleIncidentAffects(collector, 1, 'the unpaired source to fire');
    await settle();
    expect((await ruleIncidents(collector))[0].observation_ids).toEqual([unpaired.eventId]);
    expect(await deadlinesOf(rule)).toBe(0);
  });

  it('a changed delay applies to sources analysed after the change', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    await patchRule(collector, rule, { maxDelayMs: 10 * PAST_DUE_MS });
    await sourcesPastDue(collector, rule, [source(collector, 'hmac:longer-delay')], 1);
    await settle();
    expect(await ruleIncidents(collector)).toEqual([]);
    expect(await deadlinesOf(rule)).toBe(1);
  });

  it('a rule applies to its own connection only', async () => {
    await runAnalyzer();
    const watched = await createCollector(ctx, apiKey);
    const other = await createCollector(ctx, apiKey);
    const rule = await ruleOn(watched, { enabled: true });
    const waiting = source(watched, 'hmac:shared');
    await send(watched, [waiting]);
    // The other connection's source opens nothing, and its outcome with the same hash pairs with nothing.
    await send(other, [source(other, 'hmac:other-only'), outcome(other, 'hmac:shared')]);
    await drained();
    expect(await deadlinesOf(rule)).toBe(1);
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    await ruleIncidentAffects(watched, 1, 'the watched source to fire');
    expect((await ruleIncidents(watched))[0].observation_ids).toEqual([waiting.eventId]);
    expect(await ruleIncidents(other)).toEqual([]);
  });

  it('a paused analyzer with a backlog holding the outcome raises no false incident, paused or resumed', async () => {
    const { collector, rule } = await ruleInRunningAnalyzer();
    await send(collector, [source(collector, 'hmac:backlog')]);
    await drained();
    await runAnalyzer({ paused: true });
    await send(collector, [outcome(collector, 'hmac:backlog')]);
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    // Deadlines are looked at all along (20 rounds), but stream time stays before the outcome's receipt.
    await new Promise((done) => setTimeout(done, 20 * analyzerOptions.rulePollMs));
    expect(await deadlinesOf(rule)).toBe(1);
    expect(await ruleIncidents(collector)).toEqual([]);
    await runAnalyzer();
    await settle();
    expect(await deadlinesOf(rule)).toBe(0);
    expect(await ruleIncidents(collector)).toEqual([]);
  });

  it("evaluates the rules of a batch that an activation's reanalysis counted before live analysis took it", async () => {
    // A paused analyzer (no read loop) still runs reanalysis, which counts the batch's shapes and
    // marks it before its job is read: live analysis must still evaluate its rules.
    await runAnalyzer({ paused: true });
    const collector = await createCollector(ctx, apiKey);
    const rule = await ruleOn(collector, { enabled: true });
    await send(collector, [
      source(collector, 'hmac:recounted'),
      source(collector, 'hmac:recounted-paired'),
      outcome(collector, 'hmac:recounted-paired'),
    ]);
    expect(await edge.shipped()).toBe(true);
    const draft = await registerDraft(ctx, apiKey, collector.connectionId, openApiRegistration('v1'));
    await activateOk(ctx, apiKey, collector.connectionId, draft.contract.id, { expectedActiveContractVersionId: null, reason: 'promote' });
    await reanalysed(ctx, collector.connectionId);
    const batchIds = await batchIdsOfWindow(clickhouse, collector.connectionId, 0, Number.MAX_SAFE_INTEGER);
    const markers = await ctx.deps.pool.query('SELECT recounted, rules_evaluated FROM analysed_batches WHERE batch_id = ANY($1::text[])', [
      batchIds,
    ]);
    expect(markers.rows).toEqual([{ recounted: true, rules_evaluated: false }]);
    expect(await deadlinesOf(rule)).toBe(0);
    await runAnalyzer();
    await drained();
    expect(await deadlinesOf(rule)).toBe(1);
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    await ruleIncidentAffects(collector, 1, 'the unpaired source to fire');
    expect(await deadlinesOf(rule)).toBe(0);
  });
});

describe('rule evaluation across an analyzer killed between a source and its deadline', () => {
  const analyzers: SpawnedProcess[] = [];
  afterAll(async () => {
    await Promise.all(analyzers.map((process) => process.kill('SIGKILL')));
  });

  async function spawnAnalyzer(): Promise<SpawnedProcess> {
    const process = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT', {
      ANALYZER_RULE_POLL_MS: '50',
      ANALYZER_RULE_GRACE_MS: String(GRACE_MS),
      ANALYZER_CLAIM_IDLE_MS: '1000',
    });
    analyzers.push(process);
    return process;
  }

  it('loses no evaluation and fires each deadline once', async () => {
    const collector = await createCollector(ctx, apiKey);
    const rule = await ruleOn(collector, { enabled: true });
    const first = await spawnAnalyzer();
    const sources = [source(collector, 'hmac:k1'), source(collector, 'hmac:k2')];
    await send(collector, sources);
    await waitFor(async () => ((await deadlinesOf(rule)) === 2 ? true : undefined), 15_000, 'the deadlines to be stored');
    await first.kill('SIGKILL');
    await advanceTestClock(ctx.deps.redis, PAST_DUE_MS);
    await spawnAnalyzer();
    await ruleIncidentAffects(collector, 2, 'both deadlines fired after the restart', 20_000);
    await new Promise((done) => setTimeout(done, 1_000));
    const incidents = await ruleIncidents(collector);
    expect(incidents).toHaveLength(1);
    expect(incidents[0].affected_records).toBe('2');
    expect(await deadlinesOf(rule)).toBe(0);
  });
});

describe('stream time', () => {
  afterEach(async () => {
    await ctx.deps.redis.zrem(RedisKeys.pendingAdmissions, 'acct_stream_time/stream-time-test');
    await ctx.deps.redis.zrem(RedisKeys.unanalysedBatches, 'stream-time-unanalysed');
  });

  it('stays behind the grace, a batch admitted and not yet durable, and a durable batch not yet analysed', async () => {
    const clock = new ManualClock();
    const streamTime = new StreamTime(ctx.deps.redis, clock, { graceMs: GRACE_MS });
    const now = clock.nowMs();
    const idle = await streamTime.nowMs();
    expect(idle).toBeGreaterThanOrEqual(now - GRACE_MS);
    expect(idle).toBeLessThanOrEqual(clock.nowMs() - GRACE_MS);

    // A batch received 5 s ago, admitted, not yet durable in an edge's log.
    await ctx.deps.redis.zadd(RedisKeys.pendingAdmissions, now - 5_000, 'acct_stream_time/stream-time-test');
    expect(await streamTime.nowMs()).toBe(now - 5_000);
    // A batch received 8 s ago, durable, its job not yet acknowledged.
    await ctx.deps.redis.zadd(RedisKeys.unanalysedBatches, now - 8_000, 'stream-time-unanalysed');
    expect(await streamTime.nowMs()).toBe(now - 8_000);
    await ctx.deps.redis.zrem(RedisKeys.unanalysedBatches, 'stream-time-unanalysed');
    expect(await streamTime.nowMs()).toBe(now - 5_000);
  });
});
