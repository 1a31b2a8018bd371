import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_DEADLINE_MIN_MS } from '../shared/admissionTiming.js';
import { Admission } from '../ingest/admission/admission.js';
import { pendingMember } from '../ingest/admission/keys.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { RedisKeys } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import type { EdgeProcess } from './helpers/collector.js';
import { bootstrapWorkspace, callWithSession, createTestContext, type TestContext } from './helpers/context.js';
import { newLogDir } from './helpers/logDirs.js';
import {
  countObservations,
  createCollector,
  dedupEntry,
  envelope,
  postBatch,
  startEdge,
  testClickHouse,
  ManualClock,
  type Collector,
  type EdgeAddress,
  type EdgeAnswer,
} from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcpProxy.js';
import { waitFor } from './helpers/wait.js';
import { spawnWalEdge, storedCounts, viaProxy } from './helpers/walEdge.js';

// Issue 12, defect 1, in the write-ahead-log design (issue 17): usage, windows and
// de-duplication agree on what was accepted across a crash of the edge and a lost answer from
// Redis; the usage a customer is billed on equals the distinct eventIds stored.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let clickhouseProxy: TcpProxy;
const processes = new Set<EdgeProcess>();

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  clickhouseProxy = await startTcpProxy(Number(new URL(ctx.deps.config.clickhouseUrl).port));
});
afterAll(async () => {
  await Promise.all([...processes].map((edge) => edge.kill('SIGKILL')));
  await clickhouseProxy?.close();
  await clickhouse.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A collector's delivery (03): the same body again after a 503, waiting Retry-After, until an answer that is not 503. */
async function deliver(
  edge: EdgeAddress,
  collector: Collector,
  body: string,
  timeoutMs: number,
): Promise<{ final: EdgeAnswer; attempts: EdgeAnswer[] }> {
  const attempts: EdgeAnswer[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await postBatch(edge, collector, body);
    attempts.push(answer);
    if (answer.status !== 503) return { final: answer, attempts };
    if (Date.now() > deadline) throw new Error('still 503 at the deadline');
    await sleep(Number(answer.headers.get('retry-after')) * 1000);
  }
}

async function billedUsage(sessionToken: string, accountId: string): Promise<number> {
  const res = await callWithSession(ctx, sessionToken, 'GET', `/billing-accounts/${accountId}/usage`);
  expect(res.statusCode).toBe(200);
  return res.json().total;
}

/** Analysis jobs naming `eventId` in `stream`. */
async function analysisJobsFor(stream: string, eventId: string): Promise<number> {
  const entries = await ctx.deps.redis.xrange(stream, '-', '+');
  return entries.filter(([, fields]) => fields[fields.indexOf('eventIds') + 1].split(',').includes(eventId)).length;
}

describe("admissions never made durable (their edge died or lost Redis's answer before its log write)", () => {
  it("are released after their deadline and not counted; the collector's retry is admitted and counted once", {
    timeout: 60_000,
  }, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const stream = `analysis:jobs:crash-test:${Date.now()}`;
    // No sweep on this edge: the retry itself must settle the batch it meets.
    const ingest = { admissionDeadlineMs: ADMISSION_DEADLINE_MIN_MS, settleIntervalMs: 3_600_000 };
    const edge = await startEdge(ctx, clickhouse, { ingest, analysisStream: stream });
    try {
      // An edge's admission ran in Redis, then the edge never wrote its log record: simulated by
      // admitting here and never calling durable.
      const lost = new Admission(ctx.deps.redis, edge.config);
      const credential = await edge.server.pipeline.credentials.get(collector.connectionKey);
      if (credential === null) throw new Error('no credential');
      const retried = envelope(collector);
      const abandoned = envelope(collector);
      const nowMs = Date.now();
      const batches: string[] = [];
      for (const item of [retried, abandoned]) {
        const batchId = lost.newBatchId();
        const admitted = await lost.admit(credential, { nowMs, itemCount: 1, eventIds: [String(item.eventId)], batchId });
        if (admitted.kind !== 'admitted') throw new Error(`not admitted: ${admitted.kind}`);
        batches.push(batchId);
      }
      const period = usagePeriodOf(new Date(nowMs)).period;
      expect(await ctx.deps.redis.get(RedisKeys.sandboxMonthlyUsage(boot.account.id, period))).toBe('2');

      const { final, attempts } = await deliver(edge, collector, JSON.stringify({ envelopes: [retried] }), 30_000);
      // Refused while the first attempt could still become durable, then admitted once settled.
      expect(attempts.length).toBeGreaterThan(1);
      for (const attempt of attempts.slice(0, -1)) expect(attempt.headers.get('retry-after')).toBe('1');
      expect(Date.now() - nowMs).toBeGreaterThanOrEqual(ingest.admissionDeadlineMs);
      expect(final.status).toBe(202);
      expect(final.body).toMatchObject({ accepted: 1, persisted: 1 });
      const abandonedMember = pendingMember(boot.account.id, batches[1]);
      expect(await ctx.deps.redis.zscore(RedisKeys.pendingAdmissions, abandonedMember)).not.toBeNull();

      // The abandoned batch is released by an edge's sweep (any edge's) once its deadline has passed.
      const sweeping = await startEdge(ctx, clickhouse, { ingest: { ...ingest, settleIntervalMs: 200 } });
      await waitFor(
        async () => (await ctx.deps.redis.zscore(RedisKeys.pendingAdmissions, abandonedMember)) === null || undefined,
        15_000,
        'the abandoned batch settled',
      ).finally(() => sweeping.close());
      // A log write of the released batch arriving late is refused: its rows will never ship.
      expect(await lost.settleDurable([{ accountId: boot.account.id, batchId: batches[1], receivedAtMs: nowMs }])).toEqual([false]);

      await edge.shipped();
      expect(await billedUsage(boot.sessionToken, boot.account.id)).toBe(1);
      expect(await countObservations(clickhouse, collector.connectionId, [String(retried.eventId), String(abandoned.eventId)])).toBe(1);
      expect(await storedCounts(clickhouse, collector.connectionId)).toEqual({ final: 1, distinct: 1 });
      expect(await dedupEntry(ctx.deps.redis, collector, String(abandoned.eventId), edge.config.ingest.dedupWindowSeconds)).toBeNull();
      await waitFor(
        async () => (await analysisJobsFor(stream, String(retried.eventId))) === 1 || undefined,
        10_000,
        "the retry's analysis job",
      );
      expect(await analysisJobsFor(stream, String(abandoned.eventId))).toBe(0);
    } finally {
      await edge.close();
      await ctx.deps.redis.del(stream);
    }
  });
});

describe('an edge killed after answering, before shipping', () => {
  it("ships the batch from its log on restart; the collector's resend is a duplicate, stored, counted and analysed once", {
    timeout: 60_000,
  }, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    const walDir = newLogDir('edge-crash-');
    const port = await freePort();
    const edge: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: new ManualClock() };
    const spawn = async () => {
      const process = await spawnWalEdge(port, walDir, {
        CLICKHOUSE_URL: viaProxy(ctx.deps.config.clickhouseUrl, clickhouseProxy),
        INGEST_INSERT_TIMEOUT_MS: '1000',
      });
      processes.add(process);
      return process;
    };
    const item = envelope(collector);
    const eventId = String(item.eventId);
    const body = JSON.stringify({ envelopes: [item] });

    // ClickHouse unreachable: the batch is answered from the log and cannot be shipped.
    await clickhouseProxy.cut();
    try {
      const first = await spawn();
      const answered = await postBatch(edge, collector, body);
      expect(answered.status, answered.text).toBe(202);
      expect(answered.body).toMatchObject({ accepted: 1, persisted: 1 });
      await sleep(500);
      await first.kill('SIGKILL');
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
    } finally {
      await clickhouseProxy.restore();
    }

    await spawn();
    // The collector never saw the 202 (the connection broke): it sends the same body again.
    const { final } = await deliver(edge, collector, body, 15_000);
    expect(final.status).toBe(202);
    expect(final.body).toMatchObject({ accepted: 1, persisted: 0 });
    await waitFor(
      async () => (await countObservations(clickhouse, collector.connectionId)) === 1 || undefined,
      15_000,
      'the logged row shipped',
    );
    await waitFor(async () => (await analysisJobsFor(RedisKeys.analysisJobs, eventId)) > 0 || undefined, 10_000, 'its analysis job');
    expect(await storedCounts(clickhouse, collector.connectionId)).toEqual({ final: 1, distinct: 1 });
    expect(await analysisJobsFor(RedisKeys.analysisJobs, eventId)).toBe(1);
    const { period } = usagePeriodOf(new Date());
    expect(Number(await ctx.deps.redis.get(RedisKeys.workspaceMonthlyUsage(boot.account.id, boot.workspace.id, period, 'live')))).toBe(1);
  });
});
