import { appendFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { frame } from '../ingest/log/recordFrame.js';
import { RedisKeys } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { newLogDir, removeLogDirs } from './helpers/logDirs.js';
import {
  countObservations,
  countStoredNow,
  createCollector,
  envelope,
  sendEnvelopes,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
} from './helpers/ingest.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcpProxy.js';
import { waitFor } from './helpers/wait.js';

// The ingest edge with its write-ahead log (issue 17), on the real stores: a batch is answered
// once durable in the log and committed by the admission; the log is shipped to ClickHouse in
// large inserts and the analysis jobs follow the rows. ClickHouse is reached through a proxy the
// test cuts and restores.

const STREAM = 'analysis:jobs:wal-test';

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let proxy: TcpProxy;
let viaProxy: ClickHouseClient;
let workspaceId: string;
let apiKey: string;
const edges: Edge[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  proxy = await startTcpProxy(Number(new URL(ctx.deps.config.clickhouseUrl).port));
  viaProxy = createClient({
    url: `http://127.0.0.1:${proxy.port}`,
    database: ctx.deps.config.clickhouseDatabase,
    request_timeout: 2_000,
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
  });
  const boot = await bootstrapWorkspace(ctx);
  workspaceId = boot.workspace.id;
  apiKey = boot.apiKey.key;
});

afterEach(async () => {
  await proxy.restore().catch(() => undefined);
  for (const edge of edges.splice(0)) await edge.close().catch(() => undefined);
  removeLogDirs();
});

afterAll(async () => {
  await viaProxy?.close();
  await proxy?.close();
  await clickhouse?.close();
  await ctx?.close();
});

async function walEdge(walDir: string, ingest: Record<string, number> = {}): Promise<Edge> {
  const edge = await startEdge(ctx, viaProxy, {
    analysisStream: STREAM,
    ingest: { walDir, shipIntervalMs: 50, insertTimeoutMs: 1_000, ...ingest },
  });
  edges.push(edge);
  return edge;
}

async function closeEdge(edge: Edge): Promise<void> {
  edges.splice(edges.indexOf(edge), 1);
  await edge.close();
}

const batchOf = (collector: Collector, n: number) => Array.from({ length: n }, () => envelope(collector));

async function jobsOf(connectionId: string): Promise<{ batchId: string; eventIds: string[] }[]> {
  const entries = (await ctx.deps.redis.xrange(STREAM, '-', '+')) as [string, string[]][];
  return entries
    .map(([, fields]) => Object.fromEntries(fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : []))))
    .filter((job) => job.connectionId === connectionId)
    .map((job) => ({ batchId: job.batchId, eventIds: job.eventIds.split(',') }));
}

async function unanalysed(batchIds: string[]): Promise<number> {
  const scores = await Promise.all(batchIds.map((id) => ctx.deps.redis.zscore(RedisKeys.unanalysedBatches, id)));
  return scores.filter((score) => score !== null).length;
}

const until = <T>(probe: () => Promise<T | undefined>, what: string, ms = 15_000) => waitFor(probe, ms, what);

describe('ingest edge with its write-ahead log', () => {
  it('answers once the batch is durable and committed, then ships it and enqueues its analysis after its rows', async () => {
    const collector = await createCollector(ctx, apiKey);
    const edge = await walEdge(newLogDir());
    const sent = Array.from({ length: 5 }, () => batchOf(collector, 10));
    for (const batch of sent) {
      const answer = await sendEnvelopes(edge, collector, batch);
      expect(answer.status, answer.text).toBe(202);
      expect(answer.body?.persisted).toBe(10);
    }
    // A retry of an accepted batch is a duplicate at once, shipped or not.
    const retry = await sendEnvelopes(edge, collector, sent[0]);
    expect(retry.body).toMatchObject({ accepted: 10, persisted: 0 });

    const eventIds = sent.flat().map((e) => e.eventId as string);
    await until(async () => ((await countObservations(clickhouse, collector.connectionId)) === 50 ? true : undefined), 'the shipped rows');
    const jobs = await until(async () => {
      const list = await jobsOf(collector.connectionId);
      return list.length === 5 ? list : undefined;
    }, 'the analysis jobs');
    expect(jobs.flatMap((job) => job.eventIds).sort()).toEqual([...eventIds].sort());
    // Until the analyzer acknowledges their jobs, the batches hold its stream time (analyzer/streamTime.ts).
    expect(await unanalysed(jobs.map((job) => job.batchId))).toBe(5);
    expect(await countObservations(clickhouse, collector.connectionId, eventIds)).toBe(50);
  });

  it('commits each batch once: the shipper does not ask again for the batches its own requests committed', async () => {
    const collector = await createCollector(ctx, apiKey);
    // No round before the flush below: a round that read a record before its request's commit
    // was answered asks for it itself, rightly.
    const edge = await walEdge(newLogDir(), { shipIntervalMs: 60_000 });
    const admission = edge.server.pipeline.admission;
    const asked: string[] = [];
    const settle = admission.settleDurable.bind(admission);
    admission.settleDurable = (batches) => {
      asked.push(...batches.map((batch) => batch.batchId));
      return settle(batches);
    };
    for (let i = 0; i < 5; i++) expect((await sendEnvelopes(edge, collector, batchOf(collector, 4))).status).toBe(202);
    expect(await edge.shipped()).toBe(true);
    const jobs = await jobsOf(collector.connectionId);
    expect(jobs).toHaveLength(5);
    expect(asked.sort()).toEqual(jobs.map((job) => job.batchId).sort());
  });

  it('keeps answering while ClickHouse is unreachable; a restarted edge ships every accepted batch once, after cutting a torn tail', async () => {
    const collector = await createCollector(ctx, apiKey);
    const dir = newLogDir();
    await proxy.cut();
    const first = await walEdge(dir);
    const sent = Array.from({ length: 5 }, () => batchOf(collector, 10));
    for (const batch of sent) {
      const answer = await sendEnvelopes(first, collector, batch);
      expect(answer.status, answer.text).toBe(202);
    }
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
    // The analyzer's stream time waits for them (analyzer/streamTime.ts).
    const pendingScore = await ctx.deps.redis.zrange(RedisKeys.unanalysedBatches, 0, -1);
    expect(pendingScore.length).toBeGreaterThanOrEqual(5);
    // The edge stops with the batches still in its log (its last attempt to ship fails).
    await closeEdge(first);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
    // A crash in the middle of a write leaves half a record at the end of the last segment.
    const last = readdirSync(dir)
      .filter((name) => name.endsWith('.wal'))
      .sort()
      .at(-1)!;
    appendFileSync(join(dir, last), frame(Buffer.alloc(300, 1)).subarray(0, 100));

    await proxy.restore();
    await walEdge(dir);
    const eventIds = sent.flat().map((e) => e.eventId as string);
    await until(async () => ((await countObservations(clickhouse, collector.connectionId)) === 50 ? true : undefined), 'the replayed rows');
    expect(await countObservations(clickhouse, collector.connectionId, eventIds)).toBe(50);
    await until(async () => ((await jobsOf(collector.connectionId)).length === 5 ? true : undefined), 'the replayed jobs');
    // Usage counted each accepted eventId once: exactly what is stored.
    const { period } = usagePeriodOf(new Date());
    expect(
      Number(await ctx.deps.redis.get(RedisKeys.workspaceMonthlyUsage(collector.accountId, workspaceId, period, collector.mode))),
    ).toBeGreaterThanOrEqual(50);
  });

  it('turns a full log into 503 with Retry-After, and answers 202 again once ClickHouse is back', async () => {
    const collector = await createCollector(ctx, apiKey);
    await proxy.cut();
    const edge = await walEdge(newLogDir(), { walMaxBytes: 40_000 });
    const accepted: string[] = [];
    let refused: Awaited<ReturnType<typeof sendEnvelopes>> | null = null;
    for (let i = 0; i < 40 && refused === null; i++) {
      const batch = batchOf(collector, 10);
      const answer = await sendEnvelopes(edge, collector, batch);
      if (answer.status === 202) accepted.push(...batch.map((e) => e.eventId as string));
      else refused = answer;
    }
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toBe('5');

    await proxy.restore();
    const restored = Date.now();
    const batch = batchOf(collector, 10);
    await until(
      async () => ((await sendEnvelopes(edge, collector, batch)).status === 202 ? true : undefined),
      'a 202 after ClickHouse came back',
    );
    expect(Date.now() - restored).toBeLessThan(5_000);
    accepted.push(...batch.map((e) => e.eventId as string));
    await until(
      async () => ((await countObservations(clickhouse, collector.connectionId)) === accepted.length ? true : undefined),
      'every accepted row',
    );
    expect(await countObservations(clickhouse, collector.connectionId, accepted)).toBe(accepted.length);
  });
});

describe('intake paced to shipping (INGEST_WAL_PACE_BYTES)', () => {
  it('holds a request while the shipper works through a backlog, and lets it in once the round shipped', async () => {
    const collector = await createCollector(ctx, apiKey);
    const edge = await walEdge(newLogDir(), { walPaceBytes: 1, walPaceMaxWaitMs: 10_000, shipIntervalMs: 300 });
    const first = batchOf(collector, 5);
    expect((await sendEnvelopes(edge, collector, first)).status).toBe(202);
    // The log now holds more than the pace: the next request waits for the round that ships the first.
    const answer = await sendEnvelopes(edge, collector, batchOf(collector, 5));
    expect(answer.status, answer.text).toBe(202);
    expect(
      await countStoredNow(
        clickhouse,
        collector.connectionId,
        first.map((e) => e.eventId as string),
      ),
    ).toBe(5);
  });

  it('answers 503 with Retry-After to a request that waited its longest, and stores nothing of it', async () => {
    const collector = await createCollector(ctx, apiKey);
    const edge = await walEdge(newLogDir(), { walPaceBytes: 1, walPaceMaxWaitMs: 300, shipIntervalMs: 60_000 });
    expect((await sendEnvelopes(edge, collector, batchOf(collector, 5))).status).toBe(202);
    const refusedBatch = batchOf(collector, 5);
    const started = Date.now();
    const refused = await sendEnvelopes(edge, collector, refusedBatch);
    expect(refused.status, refused.text).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await edge.shipped()).toBe(true);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(5);
    expect(
      await countObservations(
        clickhouse,
        collector.connectionId,
        refusedBatch.map((e) => e.eventId as string),
      ),
    ).toBe(0);
  });

  it('does not pace while shipping fails: the log absorbs what ClickHouse cannot take', async () => {
    const collector = await createCollector(ctx, apiKey);
    await proxy.cut();
    const edge = await walEdge(newLogDir(), { walPaceBytes: 1, walPaceMaxWaitMs: 5_000 });
    expect((await sendEnvelopes(edge, collector, batchOf(collector, 5))).status).toBe(202);
    await until(async () => (edge.server.pipeline.shipper.shipping() ? undefined : true), 'a failed shipping round');
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      expect((await sendEnvelopes(edge, collector, batchOf(collector, 5))).status).toBe(202);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    await proxy.restore();
    await until(
      async () => ((await countObservations(clickhouse, collector.connectionId)) === 20 ? true : undefined),
      'every accepted row',
    );
  });
});
