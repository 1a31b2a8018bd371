import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admission } from '../ingest/admission.js';
import { IngestKeys } from '../ingest/keys.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { createClock } from '../shared/clock.js';
import { RedisKeys } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { bootstrapWorkspace, callWithSession, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, dedupEntry, envelope, postBatch, startEdge, testClickHouse, type Collector, type EdgeAddress, type EdgeAnswer } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';

// Issue 12, defect 1: usage, windows and de-duplication agree on what was accepted across a
// crash of the edge and a lost answer from Redis; the usage a customer is billed on equals the
// distinct eventIds stored. The edge here is the real process (dist/ingest/main.js) and it is
// killed with SIGKILL while its insert waits on a paused ClickHouse.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await clickhouse.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The real edge process on the test stores; a 1-s insert timeout makes its in-flight deadline about 8 s. */
async function spawnEdge(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['dist/ingest/main.js'], {
    env: { ...process.env, INGEST_PORT: String(port), INGEST_INSERT_TIMEOUT_MS: '1000', INGEST_WORKER_THREADS: '0' },
    stdio: 'ignore',
  });
  children.push(child);
  await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 20_000, 'edge healthy');
  return child;
}

function clickhousePid(): number {
  const pid = Number(readFileSync('.data/clickhouse/clickhouse-server.pid', 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error('no ClickHouse pid');
  return pid;
}

/** A collector's delivery (03): the same body again after 5xx, waiting Retry-After, until an answer that is not 503. */
async function deliver(edge: EdgeAddress, collector: Collector, body: string, timeoutMs: number): Promise<{ final: EdgeAnswer; attempts: EdgeAnswer[] }> {
  const attempts: EdgeAnswer[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await postBatch(edge, collector, body);
    attempts.push(answer);
    if (answer.status !== 503) return { final: answer, attempts };
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    if (Date.now() > deadline) throw new Error('still 503 at the deadline');
    await sleep(Number(answer.headers.get('retry-after')) * 1000);
  }
}

/** Rows stored for these eventIds, without FINAL: a second row would show here until a merge. */
async function storedRows(connectionId: string, eventIds: string[]): Promise<number> {
  const result = await clickhouse.query({
    query: `SELECT count() AS n FROM observations WHERE connection_id = ${sqlLiteral(connectionId)} AND event_id IN (${eventIds.map(sqlLiteral).join(', ')})`,
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0].n);
}

async function billedUsage(sessionToken: string, accountId: string): Promise<number> {
  const res = await callWithSession(ctx, sessionToken, 'GET', `/billing-accounts/${accountId}/usage`);
  expect(res.statusCode).toBe(200);
  return res.json().total;
}

async function analysisJobsFor(eventId: string): Promise<number> {
  const entries = await ctx.deps.redis.xrange(RedisKeys.analysisJobs, '-', '+');
  return entries.filter(([, fields]) => fields[fields.indexOf('eventIds') + 1].split(',').includes(eventId)).length;
}

describe('an edge killed while its insert waits (issue 12)', () => {
  it('counts, stores and analyses the collector\'s retried eventId once', { timeout: 180_000 }, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const port = await freePort();
    const edge: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: createClock(true, ctx.deps.redis) };
    let child = await spawnEdge(port);
    const item = envelope(collector);
    const eventId = String(item.eventId);
    const body = JSON.stringify({ envelopes: [item] });

    const clickhouseServer = clickhousePid();
    process.kill(clickhouseServer, 'SIGSTOP');
    try {
      const first = postBatch(edge, collector, body).catch(() => null);
      // Admitted (its eventId is in the de-duplication hash), and the group commit has sent its insert.
      await until(async () => (await dedupEntry(ctx.deps.redis, collector.connectionId, eventId, ctx.deps.config.ingest.dedupWindowSeconds)) !== null, 10_000, 'admitted');
      await sleep(500);
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGKILL');
      await exited;
      expect(await first).toBeNull();
    } finally {
      process.kill(clickhouseServer, 'SIGCONT');
    }
    child = await spawnEdge(port);

    const { final, attempts } = await deliver(edge, collector, body, 60_000);
    expect(final.status).toBe(202);
    // Retries were refused while the first attempt's outcome was unknown, never counted.
    expect(attempts.length).toBeGreaterThan(1);
    // ClickHouse wrote the first attempt once it resumed: the retry is its duplicate.
    expect(final.body).toMatchObject({ accepted: 1, persisted: 0 });
    expect(await storedRows(collector.connectionId, [eventId])).toBe(1);
    expect(await billedUsage(boot.sessionToken, boot.account.id)).toBe(1);
    expect(await analysisJobsFor(eventId)).toBe(1);
    child.kill('SIGTERM');
  });
});

describe('admissions whose answer Redis lost (issue 12)', () => {
  it('are settled from ClickHouse: the retry is counted once, an abandoned batch not at all', { timeout: 120_000 }, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'sandbox' });
    // No sweep while the retry runs: the retry itself must settle the batch it meets.
    const ingest = { insertTimeoutMs: 500, groupCommitMaxWaitMs: 20, settleIntervalMs: 3_600_000 };
    const edge = await startEdge(ctx, clickhouse, { ingest });
    try {
      // The edge's admission call ran in Redis but its answer never came back: simulated by
      // running it here and dropping the answer. Nothing is inserted for either batch.
      const lost = new Admission(ctx.deps.redis, edge.config);
      const credential = await edge.server.pipeline.credentials.get(collector.connectionKey);
      if (credential === null) throw new Error('no credential');
      const retried = envelope(collector);
      const abandoned = envelope(collector);
      const nowMs = Date.now();
      const batches: string[] = [];
      for (const item of [retried, abandoned]) {
        const admitted = await lost.admit(credential, { nowMs, itemCount: 1, eventIds: [String(item.eventId)] });
        if (admitted.kind !== 'admitted') throw new Error(`not admitted: ${admitted.kind}`);
        batches.push(admitted.ticket.batchId);
      }
      const period = usagePeriodOf(new Date(nowMs)).period;
      expect(await ctx.deps.redis.get(RedisKeys.sandboxMonthlyUsage(boot.account.id, period))).toBe('2');

      const { final, attempts } = await deliver(edge, collector, JSON.stringify({ envelopes: [retried] }), 60_000);
      expect(attempts.length).toBeGreaterThan(1);
      expect(final.status).toBe(202);
      expect(final.body).toMatchObject({ accepted: 1, persisted: 1 });
      expect(await ctx.deps.redis.zscore(IngestKeys.pendingBatches, batches[1])).not.toBeNull();
      // The abandoned batch is released by an edge's sweep (any edge's) once its deadline has passed.
      const sweeping = await startEdge(ctx, clickhouse, { ingest: { ...ingest, settleIntervalMs: 200 } });
      await until(async () => (await ctx.deps.redis.zscore(IngestKeys.pendingBatches, batches[1])) === null, 30_000, 'abandoned batch settled')
        .finally(() => sweeping.close());
      expect(await billedUsage(boot.sessionToken, boot.account.id)).toBe(1);
      expect(await storedRows(collector.connectionId, [String(retried.eventId), String(abandoned.eventId)])).toBe(1);
      expect(await dedupEntry(ctx.deps.redis, collector.connectionId, String(abandoned.eventId), edge.config.ingest.dedupWindowSeconds)).toBeNull();
    } finally {
      await edge.close();
    }
  });
});
