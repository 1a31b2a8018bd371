import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_RETRY_AFTER_SECONDS } from '../ingest/pipeline.js';
import { RedisKeys } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import {
  checkConnection, countObservations, createCollector, dedupEntry, envelope, sendEnvelopes, startEdge, testClickHouse, type Collector, type Edge, type EdgeAnswer,
} from './helpers/ingest.js';

// Store outages (issue 4 "Done means"): ClickHouse stopped mid-load, Redis stopped. The stores
// are stopped and started with scripts/stack.sh and always restarted in `finally`.

const run = promisify(execFile);
const stack = (command: string) => run('bash', ['scripts/stack.sh', command], { timeout: 180_000 });

let ctx: TestContext;
let clickhouse: ClickHouseClient;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
});
afterAll(async () => {
  await clickhouse.close();
  await ctx.close();
});

const RAISED = { integrationRequestsPerMin: 1_000_000, integrationObservationsPerMin: 10_000_000, workspaceObservationsPerMin: 10_000_000 };

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((done) => setTimeout(done, 200));
  }
}

interface Sent {
  items: Record<string, unknown>[];
  answer: EdgeAnswer | null;
}

describe('ClickHouse stopped mid-load', () => {
  it('answers no 202 for anything not persisted, and after restart every 202 envelope is stored exactly once', { timeout: 300_000 }, async () => {
    const edge = await startEdge(ctx, clickhouse, { limits: RAISED, ingest: { insertTimeoutMs: 2_000, groupCommitMaxWaitMs: 20 } });
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    const usageKey = RedisKeys.workspaceMonthlyUsage(boot.workspace.id, usagePeriodOf(new Date()).period, 'live');
    const sent: Sent[] = [];
    let loading = true;
    const worker = async () => {
      while (loading) {
        const items = Array.from({ length: 10 }, () => envelope(collector));
        const record: Sent = { items, answer: null };
        sent.push(record);
        record.answer = await sendEnvelopes(edge, collector, items).catch(() => null);
        if (record.answer?.status === 503) await new Promise((done) => setTimeout(done, 20));
      }
    };
    const workers = Array.from({ length: 4 }, () => worker());
    let stopped = false;
    let probe: Sent | null = null;
    try {
      await new Promise((done) => setTimeout(done, 1_000));
      stopped = true;
      await stack('stop-clickhouse');
      await new Promise((done) => setTimeout(done, 500));
      // One batch while ClickHouse is down: refused, and its admission released.
      const items = [envelope(collector), envelope(collector)];
      probe = { items, answer: await sendEnvelopes(edge, collector, items) };
      loading = false;
      await Promise.all(workers);
    } finally {
      loading = false;
      if (stopped) await stack('start-clickhouse');
    }
    await until(async () => (await clickhouse.ping()).success);

    expect(probe!.answer!.status).toBe(503);
    expect(probe!.answer!.body).toEqual({ error: 'service_unavailable' });
    expect(probe!.answer!.headers.get('retry-after')).toBe('1');
    for (const item of probe!.items) expect(await dedupEntry(ctx.deps.redis, collector.connectionId, item.eventId as string, ctx.deps.config.ingest.dedupWindowSeconds)).toBeNull();

    const statuses = sent.map((record) => record.answer?.status ?? 0);
    expect(statuses.filter((status) => status === 202).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 202 || status === 503)).toBe(true);

    const acked = sent.filter((record) => record.answer?.status === 202).flatMap((record) => record.items.map((item) => item.eventId as string));
    expect(await countObservations(clickhouse, collector.connectionId, acked)).toBe(acked.length);
    for (let offset = 0; offset < acked.length; offset += 500) {
      const slice = acked.slice(offset, offset + 500);
      const result = await clickhouse.query({
        query: `SELECT event_id, count() AS n FROM observations WHERE connection_id = '${collector.connectionId}' AND event_id IN (${slice.map((id) => `'${id}'`).join(',')}) GROUP BY event_id HAVING n > 1`,
        format: 'JSONEachRow',
      });
      expect(await result.json()).toEqual([]);
    }

    // The clients retry what was refused, honouring Retry-After while the outcome of an insert
    // that ClickHouse may have written is being settled: every retry is admitted, and each
    // envelope lands once.
    const refused = [...sent.filter((record) => record.answer?.status !== 202), probe!];
    for (const record of refused) {
      let retry = await sendEnvelopes(edge, collector, record.items);
      for (let attempt = 0; retry.status === 503 && attempt < 30; attempt += 1) {
        await new Promise((done) => setTimeout(done, Number(retry.headers.get('retry-after')) * 1000));
        retry = await sendEnvelopes(edge, collector, record.items);
      }
      expect(retry.status).toBe(202);
    }
    const all = [...sent, probe!].flatMap((record) => record.items.map((item) => item.eventId as string));
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(all.length);
    expect(await countObservations(clickhouse, collector.connectionId, all)).toBe(all.length);
    // Nothing half-counted: the monthly meter equals what is stored.
    expect(Number(await ctx.deps.redis.get(usageKey))).toBe(all.length);
    await edge.close();
  });
});

describe('Redis stopped', () => {
  it('answers 503 and persists nothing; the same batch is admitted once Redis is back', { timeout: 300_000 }, async () => {
    const edge = await startEdge(ctx, clickhouse);
    const boot = await bootstrapWorkspace(ctx);
    const warm = await createCollector(ctx, boot.apiKey.key);
    const cold = await createCollector(ctx, boot.apiKey.key, { name: 'Cold' });
    expect((await sendEnvelopes(edge, warm, [envelope(warm)])).status).toBe(202);
    const warmItems = [envelope(warm), envelope(warm)];
    const coldItems = [envelope(cold)];
    const answers: Record<string, EdgeAnswer> = {};
    let stopped = false;
    try {
      stopped = true;
      await stack('stop-redis');
      answers.warm = await sendEnvelopes(edge, warm, warmItems, { t: Math.floor(Date.now() / 1000) });
      answers.cold = await sendEnvelopes(edge, cold, coldItems, { t: Math.floor(Date.now() / 1000) });
      answers.check = await checkConnection(edge, warm, { t: Math.floor(Date.now() / 1000) });
      const ready = await fetch(`${edge.url}/readyz`);
      answers.ready = { status: ready.status, headers: ready.headers, text: '', body: await ready.json() };
    } finally {
      if (stopped) await stack('start-redis');
    }
    await until(async () => (await ctx.deps.redis.ping()) === 'PONG');
    for (const name of ['warm', 'cold', 'check']) {
      expect(answers[name].status, name).toBe(503);
      expect(answers[name].body, name).toEqual({ error: 'service_unavailable' });
      // Every 503 of the edge says when to retry (issue 12, defect 5).
      expect(answers[name].headers.get('retry-after'), name).toBe(String(STORE_RETRY_AFTER_SECONDS));
    }
    expect(answers.ready.status).toBe(503);
    expect(answers.ready.headers.get('retry-after')).toBe('1');
    expect(answers.ready.body).toMatchObject({ redis: false, postgres: true, clickhouse: true });
    expect(await countObservations(clickhouse, warm.connectionId)).toBe(1);
    expect(await countObservations(clickhouse, cold.connectionId)).toBe(0);

    await until(async () => (await sendEnvelopes(edge, warm, warmItems)).status === 202);
    expect((await sendEnvelopes(edge, cold, coldItems)).body).toMatchObject({ accepted: 1, persisted: 1 });
    expect(await countObservations(clickhouse, warm.connectionId)).toBe(3);
    await edge.close();
  });
});

describe('after the rows committed', () => {
  it('still answers 202 when the analysis job cannot be added, and adds it once Redis takes it', async () => {
    const stream = `analysis:jobs:test:${Date.now()}`;
    const edge = await startEdge(ctx, clickhouse, { analysisStream: stream });
    try {
      const boot = await bootstrapWorkspace(ctx);
      const collector: Collector = await createCollector(ctx, boot.apiKey.key);
      await ctx.deps.redis.del(stream);
      await ctx.deps.redis.set(stream, 'not a stream');
      const items = [envelope(collector), envelope(collector)];
      const res = await sendEnvelopes(edge, collector, items);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ persisted: 2 });
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
      const metrics = await (await fetch(`${edge.url}/metrics`)).text();
      expect(metrics).toMatch(/^ingest_analysis_enqueue_failures_total\{[^}]*\} 1$/m);
      // The eventIds are committed all the same: a resend is a duplicate.
      expect((await sendEnvelopes(edge, collector, items)).body).toMatchObject({ accepted: 2, persisted: 0 });
      await ctx.deps.redis.del(stream);
      await until(async () => (await ctx.deps.redis.xlen(stream)) === 1, 10_000);
      const [[, fields]] = await ctx.deps.redis.xrange(stream, '-', '+');
      expect(fields).toEqual(expect.arrayContaining(['connectionId', collector.connectionId, 'eventIds', items.map((item) => item.eventId).join(',')]));
    } finally {
      await edge.close();
      await ctx.deps.redis.del(stream);
    }
  });

  it('answers 503 with Retry-After 1 for a batch naming an eventId whose first insert has not finished', async () => {
    const edge = await startEdge(ctx, clickhouse, { ingest: { groupCommitMinWaitMs: 1_500, groupCommitMaxWaitMs: 1_500 } });
    try {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
      expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
      const waiting = envelope(collector);
      const first = sendEnvelopes(edge, collector, [waiting]);
      await new Promise((done) => setTimeout(done, 200));
      const overlapping = await sendEnvelopes(edge, collector, [envelope(collector), waiting]);
      expect(overlapping.status).toBe(503);
      expect(overlapping.body).toEqual({ error: 'service_unavailable' });
      expect(overlapping.headers.get('retry-after')).toBe('1');
      expect((await first).status).toBe(202);
      const retried = await sendEnvelopes(edge, collector, [waiting]);
      expect(retried.body).toMatchObject({ accepted: 1, persisted: 0 });
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
    } finally {
      await edge.close();
    }
  });
});
