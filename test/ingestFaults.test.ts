import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admission } from '../ingest/admission/admission.js';
import { STORE_RETRY_AFTER_SECONDS } from '../ingest/pipeline/storeFailure.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { connectRedis, RedisKeys, type Redis } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import {
  checkConnection,
  countObservations,
  createCollector,
  dedupEntry,
  envelope,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type EdgeAnswer,
} from './helpers/ingest.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcpProxy.js';
import { waitFor } from './helpers/wait.js';
import { viaProxy } from './helpers/walEdge.js';

// Store faults and in-flight eventIds, answer by answer, on an edge in this process (the same
// faults under load, against the edge process: test/ingestWalFaults.test.ts). Redis is reached
// through a proxy the test cuts and restores, so the server other test runs use keeps running.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let redisProxy: TcpProxy;
let proxiedRedis: Redis;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  redisProxy = await startTcpProxy(Number(new URL(ctx.deps.config.redisUrl).port || 6379));
  proxiedRedis = await connectRedis(viaProxy(ctx.deps.config.redisUrl, redisProxy));
});
afterAll(async () => {
  proxiedRedis?.disconnect();
  await redisProxy?.close();
  await clickhouse.close();
  await ctx.close();
});

/** The workspace's usage this month in the collector's mode. */
async function usageOf(collector: Collector): Promise<number> {
  const { rows } = await ctx.deps.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM connections WHERE id = $1', [
    collector.connectionId,
  ]);
  const key = RedisKeys.workspaceMonthlyUsage(collector.accountId, rows[0].workspace_id, usagePeriodOf(new Date()).period, collector.mode);
  return Number(await ctx.deps.redis.get(key));
}

describe('Redis unreachable', () => {
  it('answers 503 with Retry-After and persists nothing; the same batches are admitted once Redis is back', {
    timeout: 60_000,
  }, async () => {
    // The edge's Redis is the proxied client; the test reads and writes through its own.
    const edge = await startEdge({ ...ctx, deps: { ...ctx.deps, redis: proxiedRedis } }, clickhouse);
    try {
      const boot = await bootstrapWorkspace(ctx);
      const warm = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
      const cold = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name: 'Cold' });
      expect((await sendEnvelopes(edge, warm, [envelope(warm)])).status).toBe(202);
      const warmItems = [envelope(warm), envelope(warm)];
      const coldItems = [envelope(cold)];
      const answers: Record<string, EdgeAnswer> = {};
      await redisProxy.cut();
      try {
        answers.warm = await sendEnvelopes(edge, warm, warmItems);
        answers.cold = await sendEnvelopes(edge, cold, coldItems);
        answers.check = await checkConnection(edge, warm);
        const ready = await fetch(`${edge.url}/readyz`);
        answers.ready = { status: ready.status, headers: ready.headers, text: '', body: await ready.json() };
      } finally {
        await redisProxy.restore();
      }
      for (const name of ['warm', 'cold', 'check']) {
        expect(answers[name].status, name).toBe(503);
        expect(answers[name].body, name).toEqual({ error: 'service_unavailable' });
        // Every 503 of the edge says when to retry (issue 12, defect 5).
        expect(answers[name].headers.get('retry-after'), name).toBe(String(STORE_RETRY_AFTER_SECONDS));
      }
      expect(answers.ready.status).toBe(503);
      expect(answers.ready.headers.get('retry-after')).toBe('1');
      expect(answers.ready.body).toMatchObject({ redis: false, postgres: true, clickhouse: true });
      const window = edge.config.ingest.dedupWindowSeconds;
      for (const item of warmItems) expect(await dedupEntry(ctx.deps.redis, warm, String(item.eventId), window)).toBeNull();
      expect(await dedupEntry(ctx.deps.redis, cold, String(coldItems[0].eventId), window)).toBeNull();
      expect(await usageOf(warm)).toBe(1);

      const restored = Date.now();
      await waitFor(
        async () => (await sendEnvelopes(edge, warm, warmItems)).status === 202 || undefined,
        10_000,
        'a 202 once Redis is back',
      );
      expect(Date.now() - restored).toBeLessThan(5_000);
      expect((await sendEnvelopes(edge, cold, coldItems)).body).toMatchObject({ accepted: 1, persisted: 1 });
      await edge.shipped();
      expect(await countObservations(clickhouse, warm.connectionId)).toBe(3);
      expect(await countObservations(clickhouse, cold.connectionId)).toBe(1);
      // Both connections are of one workspace: its usage equals what is stored.
      expect(await usageOf(warm)).toBe(4);
    } finally {
      await edge.close();
    }
  });
});

describe('an eventId in flight (admitted, not yet durable)', () => {
  it('answers 503 with Retry-After 1 for a batch naming it and admits nothing of that batch; once its batch is durable it is a duplicate', async () => {
    const edge = await startEdge(ctx, clickhouse);
    try {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
      // Another edge admitted it and is writing its log record.
      const other = new Admission(ctx.deps.redis, edge.config);
      const credential = await edge.server.pipeline.credentials.get(collector.connectionKey);
      if (credential === null) throw new Error('no credential');
      const waiting = envelope(collector);
      const batchId = other.newBatchId();
      const receivedAtMs = Date.now();
      const admitted = await other.admit(credential, { nowMs: receivedAtMs, itemCount: 1, eventIds: [String(waiting.eventId)], batchId });
      expect(admitted.kind).toBe('admitted');

      const fresh = envelope(collector);
      const overlapping = await sendEnvelopes(edge, collector, [fresh, waiting]);
      expect(overlapping.status).toBe(503);
      expect(overlapping.body).toEqual({ error: 'service_unavailable' });
      expect(overlapping.headers.get('retry-after')).toBe('1');
      expect(await dedupEntry(ctx.deps.redis, collector, String(fresh.eventId), edge.config.ingest.dedupWindowSeconds)).toBeNull();
      expect(await usageOf(collector)).toBe(1);

      // The other edge's record is durable: its commit makes the eventId a duplicate at once.
      expect(await other.durable({ accountId: collector.accountId, batchId, receivedAtMs })).toBe(true);
      const retried = await sendEnvelopes(edge, collector, [fresh, waiting]);
      expect(retried.status).toBe(202);
      expect(retried.body).toMatchObject({ accepted: 2, persisted: 1 });
      expect(await usageOf(collector)).toBe(2);
    } finally {
      await edge.close();
    }
  });
});

describe('after the rows are durable', () => {
  it('still answers 202 when the analysis job cannot be added, and adds it once, when Redis takes it', async () => {
    const stream = `analysis:jobs:faults-test:${Date.now()}`;
    const edge = await startEdge(ctx, clickhouse, { analysisStream: stream });
    try {
      const boot = await bootstrapWorkspace(ctx);
      const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
      await ctx.deps.redis.del(stream);
      await ctx.deps.redis.set(stream, 'not a stream');
      const items = [envelope(collector), envelope(collector)];
      const res = await sendEnvelopes(edge, collector, items);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ persisted: 2 });
      // The rows go in; the jobs after them fail, and the shipper tries the round again.
      await waitFor(async () => (await countObservations(clickhouse, collector.connectionId)) === 2 || undefined, 10_000, 'the rows');
      const metrics = await (await fetch(`${edge.url}/metrics`)).text();
      expect(metrics).toMatch(/^ingest_insert_failures_total(\{[^}]*\})? [1-9]\d*$/m);
      // The eventIds are committed all the same: a resend is a duplicate.
      expect((await sendEnvelopes(edge, collector, items)).body).toMatchObject({ accepted: 2, persisted: 0 });
      await ctx.deps.redis.del(stream);
      await edge.shipped();
      const entries = await ctx.deps.redis.xrange(stream, '-', '+');
      expect(entries).toHaveLength(1);
      expect(entries[0][1]).toEqual(
        expect.arrayContaining(['connectionId', collector.connectionId, 'eventIds', items.map((item) => item.eventId).join(',')]),
      );
      // The rows sent again with the round are one row each after FINAL.
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
    } finally {
      await edge.close();
      await ctx.deps.redis.del(stream);
    }
  });
});
