import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { advanceTestClock, resetTestClock } from '../shared/clock.js';
import { createCollector as createLibraryCollector } from '../collector/src/collector.js';
import type { Collector as LibraryCollector, CollectorOptions, ConnectionCheckResult, Observation } from '../collector/src/types.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, startEdge, testClickHouse, type Collector, type Edge, type ManualClock } from './helpers/ingest.js';
import {
  MARK,
  UNLIMITED_EDGE_ENV,
  assertNoValues,
  assertOnlyStructure,
  markedValues,
  spawnEdgeProcess,
  startRecordingProxy,
  startSilentServer,
  type EdgeProcess,
  type RecordedRequest,
  type RecordingProxy,
} from './helpers/collector.js';
import { freePort } from './helpers/ports.js';
import { waitFor } from './helpers/wait.js';

// The collector library against the real edge and stores (document 03 "Ingestion", "Collector-
// side signals"): exactly-once delivery through a crash of the edge process, an edge that is
// down or hangs, 429 with Retry-After, the monthly quota's 403, a refused token, and the bytes on
// the wire (a recording proxy between the library and the edge).

/** A connection's rows and distinct eventIds once `expected` rows are there (the edge's log ships them), or after 20 s. */
async function storedOnce(connectionId: string, expected: number): Promise<{ rows: string; ids: string }> {
  const read = async () => {
    const result = await clickhouse.query({
      query: `SELECT count() AS rows, uniqExact(event_id) AS ids FROM observations WHERE connection_id = ${sqlLiteral(connectionId)}`,
      format: 'JSONEachRow',
    });
    return (await result.json<{ rows: string; ids: string }>())[0];
  };
  const counts = await waitFor(
    async () => {
      const now = await read();
      return Number(now.rows) >= expected ? now : undefined;
    },
    20_000,
    `${expected} rows`,
  ).catch(() => read());
  return counts;
}

let ctx: TestContext;
let clickhouse: ClickHouseClient;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
});

afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await clickhouse?.close();
  await ctx?.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function libraryCollector(
  integration: Pick<Collector, 'integrationKey' | 'connectionKey' | 'ingestToken' | 'direction' | 'protocol'>,
  endpoint: string,
  options: Partial<CollectorOptions> = {},
): LibraryCollector {
  const collector = createLibraryCollector({
    endpoint,
    integrationKey: integration.integrationKey,
    connectionKey: integration.connectionKey,
    ingestToken: integration.ingestToken,
    direction: integration.direction,
    protocol: integration.protocol,
    hashKey: 'delivery-test',
    connectionCheck: false,
    // These tests are about delivery: the budgets have their own.
    maxObservationsPerMinute: 0,
    maxRequestsPerMinute: 0,
    ...options,
  });
  cleanups.push(() => collector.close(0));
  return collector;
}

async function newIntegration(): Promise<Collector> {
  const boot = await bootstrapWorkspace(ctx);
  return createCollector(ctx, boot.apiKey.key, { mode: 'sandbox' });
}

async function proxyTo(target: string): Promise<RecordingProxy> {
  const proxy = await startRecordingProxy(target);
  cleanups.push(() => proxy.close());
  return proxy;
}

async function inProcessEdge(overrides: Parameters<typeof startEdge>[2] = {}): Promise<Edge> {
  const edge = await startEdge(ctx, clickhouse, overrides);
  cleanups.push(() => edge.close());
  return edge;
}

const uploads = (proxy: RecordingProxy): RecordedRequest[] => proxy.requests.filter((r) => r.method === 'POST' && r.path === '/ingest');

function order(i: number): Observation {
  return {
    method: 'GET',
    routeTemplate: '/v1/orders/{orderId}',
    statusCode: 200,
    durationMs: 3.5,
    body: { json: { id: `ord_${i}`, total: i * 1.5, lines: [{ sku: `sku-${i}`, qty: i % 7 }] } },
    correlation: { sourceEventId: `evt-${i}` },
  };
}

describe('delivery exactly once', () => {
  it('brings 100,000 observations of a host workload to ClickHouse once each, across a SIGKILL of the edge', {
    timeout: 150_000,
  }, async () => {
    const TOTAL = 100_000;
    const integration = await newIntegration();
    const port = await freePort();
    // Raised limits; a 1-s insert timeout settles the batch the kill interrupted within seconds.
    const env = { ...UNLIMITED_EDGE_ENV, INGEST_INSERT_TIMEOUT_MS: '1000' };
    let edge: EdgeProcess = await spawnEdgeProcess(port, env);
    cleanups.push(() => edge.kill('SIGKILL'));
    const checks: ConnectionCheckResult[] = [];
    const collector = libraryCollector(integration, edge.url, {
      // Room for every observation (about 900 bytes each) while the edge is down: none may drop.
      maxQueueSize: TOTAL,
      maxQueueBytes: 256 * 1024 * 1024,
      flushIntervalMs: 20,
      retry: { initialDelayMs: 20, maxDelayMs: 500 },
      requestTimeoutMs: 5_000,
      // The edge's limits are raised, so is the collector's budget (before the check answers it
      // would be the default 6,000 observations and 600 requests a minute).
      maxObservationsPerMinute: 0,
      maxRequestsPerMinute: 0,
      connectionCheck: true,
      onConnectionCheck: (result) => checks.push(result),
    });
    const producing = (async () => {
      for (let i = 0; i < TOTAL; i++) {
        collector.observe(order(i));
        // The host does other work meanwhile.
        if (i % 500 === 499) await new Promise((done) => setImmediate(done));
      }
    })();
    await waitFor(() => (collector.counters().delivered >= 25_000 ? true : undefined), 90_000, '25,000 delivered');
    await edge.kill('SIGKILL');
    const atKill = collector.counters();
    await sleep(300);
    edge = await spawnEdgeProcess(port, env);
    await producing;
    await waitFor(() => (collector.counters().delivered >= TOTAL ? true : undefined), 110_000, 'every observation delivered');
    await collector.close(1_000);

    expect(atKill.delivered).toBeLessThan(TOTAL);
    expect(collector.counters()).toMatchObject({
      observed: TOTAL,
      delivered: TOTAL,
      rejected: 0,
      dropped: 0,
      buildErrors: 0,
      quotaRejected: 0,
      skippedInspections: 0,
      connectionStatus: 200,
    });
    expect(collector.counters().failedBatches).toBeGreaterThan(0);
    expect(checks).toStrictEqual([
      { ok: true, status: 200, body: expect.objectContaining({ integrationKey: integration.integrationKey, credentialStatus: 'active' }) },
    ]);
    const counts = await storedOnce(integration.connectionId, TOTAL);
    expect({ rows: Number(counts.rows), ids: Number(counts.ids) }).toStrictEqual({ rows: TOTAL, ids: TOTAL });
    await edge.kill('SIGTERM');
  });
});

describe('an edge that is down or hangs', () => {
  it('never throws into the host: counters show the failures, flush and close resolve in time', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const integration = await newIntegration();
      const checks: ConnectionCheckResult[] = [];
      const collector = libraryCollector(integration, `http://127.0.0.1:${await freePort()}`, {
        flushIntervalMs: 10,
        retry: { initialDelayMs: 10, maxDelayMs: 40 },
        connectionCheck: true,
        onConnectionCheck: (result) => checks.push(result),
      });
      for (let i = 0; i < 120; i++) collector.observe(order(i));
      collector.observe(undefined as unknown as Observation);
      await collector.flush();
      await waitFor(() => (collector.counters().failedBatches >= 3 ? true : undefined), 5_000, 'retries');
      await collector.flush();
      await waitFor(() => checks[0], 5_000, 'the connection check');
      expect(collector.counters()).toMatchObject({ observed: 120, delivered: 0, rejected: 0, buildErrors: 1, connectionStatus: 0 });
      expect(checks).toStrictEqual([{ ok: false, status: 0, error: expect.stringContaining('no answer') }]);
      const started = Date.now();
      await collector.close(300);
      expect(Date.now() - started).toBeLessThan(400);
      expect(collector.counters()).toMatchObject({ delivered: 0, dropped: 120, deliveryState: 'closed' });

      // An edge that accepts the connection and never answers: close() aborts the upload in flight.
      const silent = await startSilentServer();
      cleanups.push(() => silent.close());
      const hung = libraryCollector(integration, silent.url, { requestTimeoutMs: 60_000, maxBatchSize: 10 });
      for (let i = 0; i < 10; i++) hung.observe(order(i));
      await sleep(100);
      const closing = Date.now();
      await hung.close(200);
      const took = Date.now() - closing;
      expect(took).toBeGreaterThanOrEqual(190);
      expect(took).toBeLessThan(300);
      expect(hung.counters()).toMatchObject({ delivered: 0, dropped: 10, deliveryState: 'closed' });
      await new Promise((done) => setImmediate(done));
      expect(unhandled).toStrictEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('429 with Retry-After', () => {
  it('waits at least Retry-After before the next attempt, then delivers the same envelopes', { timeout: 30_000 }, async () => {
    const integration = await newIntegration();
    // One request per minute per integration; the edge's own clock is moved to the window's end.
    const edge = await inProcessEdge({ limits: { integrationRequestsPerMin: 1 } });
    const proxy = await proxyTo(edge.url);
    const collector = libraryCollector(integration, proxy.url, {
      maxBatchSize: 5,
      flushIntervalMs: 10,
      retry: { initialDelayMs: 10, maxDelayMs: 20 },
    });
    for (let i = 0; i < 5; i++) collector.observe(order(i));
    await collector.flush();
    expect(collector.counters().delivered).toBe(5);
    (edge.clock as ManualClock).advance(57_000);
    for (let i = 5; i < 10; i++) collector.observe(order(i));
    await collector.flush();
    await waitFor(() => (collector.counters().delivered === 10 ? true : undefined), 20_000, 'the retried batch');
    const attempts = uploads(proxy);
    expect(attempts[0].status).toBe(202);
    expect(attempts.at(-1)?.status).toBe(202);
    const refused = attempts.slice(1, -1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const [index, attempt] of refused.entries()) {
      expect(attempt.status).toBe(429);
      expect(JSON.parse(attempt.responseBody).error).toBe('workload_rate_limited');
      const retryAfterMs = Number(attempt.responseHeaders['retry-after']) * 1000;
      expect(retryAfterMs).toBeGreaterThanOrEqual(1000);
      const next = attempts[index + 2];
      expect(next.at - attempt.answeredAt).toBeGreaterThanOrEqual(retryAfterMs - 5);
      // The same envelopes, signed again with a fresh timestamp.
      expect(next.body.equals(attempt.body)).toBe(true);
      expect(next.headers['x-service-signature']).not.toBe(attempt.headers['x-service-signature']);
    }
    expect(collector.counters()).toMatchObject({ failedBatches: refused.length, rejected: 0, dropped: 0 });
  });
});

describe('the budget', () => {
  it("takes the edge's budget from the connection check: a Sandbox burst of 1,000 goes whole, the 1,001st is throttled, no 429", {
    timeout: 30_000,
  }, async () => {
    // A Sandbox Integration: the edge's limits are 1,000 observations and 100 requests a minute.
    const integration = await newIntegration();
    const edge = await inProcessEdge();
    const proxy = await proxyTo(edge.url);
    const checks: ConnectionCheckResult[] = [];
    const collector = libraryCollector(integration, proxy.url, {
      maxObservationsPerMinute: undefined,
      maxRequestsPerMinute: undefined,
      connectionCheck: true,
      onConnectionCheck: (result) => checks.push(result),
      flushIntervalMs: 10,
      clock: () => edge.clock.nowMs(),
    });
    await waitFor(() => checks[0], 5_000, 'the connection check');
    expect(checks[0].body).toMatchObject({ limits: { observationsPerMinute: 1_000, requestsPerMinute: 100 } });
    for (let i = 0; i < 1_001; i++) collector.observe(order(i));
    expect(collector.counters()).toMatchObject({ observed: 1_000, throttled: 1 });
    await collector.flush();
    expect(collector.counters()).toMatchObject({ delivered: 1_000, failedBatches: 0, rejected: 0, dropped: 0 });
    expect(uploads(proxy).map((r) => r.status)).toStrictEqual(Array(20).fill(202));
    // A minute later (both clocks moved) the window has room again.
    (edge.clock as ManualClock).advance(61_000);
    for (let i = 0; i < 10; i++) collector.observe(order(i));
    await collector.flush();
    expect(collector.counters()).toMatchObject({ observed: 1_010, delivered: 1_010, throttled: 1, failedBatches: 0 });
  });
});

describe('the budget of a Live Integration, against the compiled edge on the shared test clock', () => {
  // The edge process reads the slot's test clock (ENABLE_TEST_CLOCK=1, an offset in Redis); the
  // collector reads the same offset through its `clock` option, so "a minute later" takes no minute.
  let clockOffsetMs = 0;
  const testClock = () => Date.now() + clockOffsetMs;
  const moveClock = async (ms: number) => {
    clockOffsetMs = await advanceTestClock(ctx.deps.redis, ms);
  };
  let edge: EdgeProcess;

  beforeAll(async () => {
    await resetTestClock(ctx.deps.redis);
    edge = await spawnEdgeProcess(await freePort(), { ENABLE_TEST_CLOCK: '1' });
  });
  afterEach(async () => {
    await resetTestClock(ctx.deps.redis);
    clockOffsetMs = 0;
  });
  afterAll(async () => {
    await edge?.stop();
  });

  /** A Live Integration, a recording proxy to the edge, and a collector with the edge's budget (the connection check's). */
  async function live(options: Partial<CollectorOptions> = {}) {
    const boot = await bootstrapWorkspace(ctx);
    const integration = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    const proxy = await proxyTo(edge.url);
    const checks: ConnectionCheckResult[] = [];
    const collector = libraryCollector(integration, proxy.url, {
      maxObservationsPerMinute: undefined,
      maxRequestsPerMinute: undefined,
      connectionCheck: true,
      onConnectionCheck: (result) => checks.push(result),
      flushIntervalMs: 10,
      clock: testClock,
      ...options,
    });
    await waitFor(() => checks[0], 5_000, 'the connection check');
    expect(checks[0].body).toMatchObject({ mode: 'live', limits: { observationsPerMinute: 6_000, requestsPerMinute: 600 } });
    return { integration, proxy, collector };
  }

  const statuses = (proxy: RecordingProxy) => new Set(uploads(proxy).map((r) => r.status));

  it('delivers a burst of 1,000 whole, each exactly once', { timeout: 60_000 }, async () => {
    const { integration, proxy, collector } = await live();
    for (let i = 0; i < 1_000; i++) collector.observe(order(i));
    expect(collector.counters()).toMatchObject({ observed: 1_000, throttled: 0 });
    await collector.flush();
    expect(collector.counters()).toMatchObject({ delivered: 1_000, failedBatches: 0, rejected: 0, dropped: 0, throttled: 0 });
    expect(statuses(proxy)).toStrictEqual(new Set([202]));
    const counts = await storedOnce(integration.connectionId, 1_000);
    expect({ rows: Number(counts.rows), ids: Number(counts.ids) }).toStrictEqual({ rows: 1_000, ids: 1_000 });
  });

  it('delivers 6,000 of 7,000 in one minute and throttles 1,000, with no 429; a minute after the first burst there is room for it again', {
    timeout: 90_000,
  }, async () => {
    const { integration, proxy, collector } = await live();
    for (let i = 0; i < 1_000; i++) collector.observe(order(i));
    await collector.flush();
    await moveClock(50_000);
    // 50 s later, within the minute of the first 1,000: room for 5,000 more.
    for (let i = 1_000; i < 7_000; i++) collector.observe(order(i));
    expect(collector.counters()).toMatchObject({ observed: 6_000, throttled: 1_000 });
    await collector.flush();
    expect(collector.counters()).toMatchObject({ delivered: 6_000, failedBatches: 0, rejected: 0, dropped: 0 });
    expect(statuses(proxy)).toStrictEqual(new Set([202]));
    expect(uploads(proxy)).toHaveLength(120);
    // 61 s after the first burst: its 1,000 places are free, the later 5,000 still count.
    await moveClock(11_000);
    for (let i = 7_000; i < 8_001; i++) collector.observe(order(i));
    expect(collector.counters()).toMatchObject({ observed: 7_000, throttled: 1_001 });
    await collector.flush();
    expect(collector.counters()).toMatchObject({ delivered: 7_000, failedBatches: 0, rejected: 0, dropped: 0 });
    expect(statuses(proxy)).toStrictEqual(new Set([202]));
    const counts = await storedOnce(integration.connectionId, 7_000);
    expect({ rows: Number(counts.rows), ids: Number(counts.ids) }).toStrictEqual({ rows: 7_000, ids: 7_000 });
  });

  it("keeps to the edge's 600 requests a minute: a host flushing after every observation gets no 429, the rest waits and goes batched", {
    timeout: 90_000,
  }, async () => {
    const { proxy, collector } = await live();
    for (let i = 0; i < 700; i++) {
      collector.observe(order(i));
      await collector.flush();
    }
    // 600 single-envelope uploads; the other 100 wait in the queue for the window.
    expect(collector.counters()).toMatchObject({ observed: 700, delivered: 600, failedBatches: 0, rejected: 0, dropped: 0 });
    expect(uploads(proxy)).toHaveLength(600);
    expect(statuses(proxy)).toStrictEqual(new Set([202]));
    await moveClock(61_000);
    await collector.flush();
    expect(collector.counters()).toMatchObject({ delivered: 700, failedBatches: 0 });
    expect(
      uploads(proxy)
        .slice(600)
        .map((r) => [r.status, JSON.parse(r.body.toString('utf8')).envelopes.length]),
    ).toStrictEqual([
      [202, 50],
      [202, 50],
    ]);
  });
});

describe('the monthly quota (403)', () => {
  it("pauses until quotaResetAtSeconds, discards the period's queue and counts quotaRejected and rejected", {
    timeout: 30_000,
  }, async () => {
    const integration = await newIntegration();
    const edge = await inProcessEdge({ limits: { sandboxMonthlyAllowance: 60 } });
    const proxy = await proxyTo(edge.url);
    // One upload at a time, so that batches wait in the queue behind the refused one (with more in
    // flight, those already sent are refused by the edge in turn and counted in `rejected`).
    const collector = libraryCollector(integration, proxy.url, { maxBatchSize: 50, flushIntervalMs: 60_000, maxConcurrentUploads: 1 });
    for (let i = 0; i < 50; i++) collector.observe(order(i));
    await collector.flush();
    expect(collector.counters().delivered).toBe(50);
    // 50 more do not fit the allowance of 60: the whole batch is refused, the 70 behind it discarded.
    for (let i = 50; i < 170; i++) collector.observe(order(i));
    await collector.flush();
    const refused = uploads(proxy)[1];
    expect(refused.status).toBe(403);
    const answer = JSON.parse(refused.responseBody);
    expect(answer).toMatchObject({ error: 'observation_monthly_quota_exhausted', retryable: false, batchPersisted: 0 });
    const resetAtMs = Date.parse(answer.resetAt);
    const now = new Date();
    expect(resetAtMs).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(collector.counters()).toMatchObject({
      observed: 170,
      delivered: 50,
      quotaRejected: 1,
      rejected: 50,
      dropped: 70,
      quotaResetAtSeconds: resetAtMs / 1000,
      deliveryState: 'quota-paused',
    });
    // New observations are refused locally, and nothing more is sent.
    for (let i = 0; i < 10; i++) collector.observe(order(i));
    await collector.flush();
    await sleep(200);
    expect(uploads(proxy)).toHaveLength(2);
    expect(collector.counters()).toMatchObject({ observed: 170, dropped: 80, quotaRejected: 1 });

    // At the reset the pause ends: the counter goes back to 0 and observations are queued again.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(resetAtMs + 1_000);
    expect(collector.counters()).toMatchObject({ quotaResetAtSeconds: 0, deliveryState: 'running' });
    for (let i = 0; i < 5; i++) collector.observe(order(i));
    vi.useRealTimers();
    expect(collector.counters().observed).toBe(175);
    // (The test cannot wait for a new month: an edge with a larger allowance stands in for it.)
    proxy.target = (await inProcessEdge({ limits: { sandboxMonthlyAllowance: 1_000 } })).url;
    await collector.flush();
    expect(collector.counters()).toMatchObject({ delivered: 55, quotaRejected: 1, rejected: 50 });
    expect(uploads(proxy).map((r) => r.status)).toStrictEqual([202, 403, 202]);
  });
});

describe('a refused token (401)', () => {
  it('stops retries: one upload attempt for the batch, rejected counted, nothing sent afterwards', async () => {
    const integration = await newIntegration();
    const edge = await inProcessEdge();
    const proxy = await proxyTo(edge.url);
    const checks: ConnectionCheckResult[] = [];
    const wrong = { ...integration, ingestToken: `svc_ing_${randomBytes(32).toString('base64url')}` };
    const collector = libraryCollector(wrong, proxy.url, {
      maxBatchSize: 10,
      retry: { initialDelayMs: 10, maxDelayMs: 20 },
      connectionCheck: true,
      onConnectionCheck: (result) => checks.push(result),
    });
    for (let i = 0; i < 10; i++) collector.observe(order(i));
    await collector.flush();
    await sleep(300);
    expect(uploads(proxy).map((r) => r.status)).toStrictEqual([401]);
    expect(collector.counters()).toMatchObject({
      observed: 10,
      rejected: 10,
      failedBatches: 0,
      delivered: 0,
      deliveryState: 'unauthenticated',
    });
    for (let i = 0; i < 3; i++) collector.observe(order(i));
    await collector.flush();
    await sleep(200);
    expect(uploads(proxy)).toHaveLength(1);
    expect(collector.counters()).toMatchObject({ observed: 10, rejected: 13 });
    await waitFor(() => checks[0], 5_000, 'the connection check');
    expect(checks).toStrictEqual([
      { ok: false, status: 401, body: { error: 'unauthenticated' }, error: 'the edge answered 401 unauthenticated' },
    ]);
    expect(collector.counters().connectionStatus).toBe(401);
  });
});

describe('batches', () => {
  it('stay under 1 MiB (split by size) and 50 envelopes', { timeout: 30_000 }, async () => {
    const integration = await newIntegration();
    const edge = await inProcessEdge();
    const proxy = await proxyTo(edge.url);
    const collector = libraryCollector(integration, proxy.url, { flushIntervalMs: 10 });
    // About 400 KB of field names per envelope: two fit a batch.
    const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`${'f'.repeat(240)}${String(i).padStart(3, '0')}`, i]));
    const big = { a: wide, b: wide, c: wide };
    for (let i = 0; i < 5; i++) collector.observe({ ...order(i), body: { json: big } });
    for (let i = 0; i < 60; i++) collector.observe(order(i));
    await collector.flush();
    expect(collector.counters()).toMatchObject({ observed: 65, delivered: 65, rejected: 0, buildErrors: 0 });
    // Uploads run concurrently, so the proxy records them in any order: count the wide envelopes per batch.
    const sizes = uploads(proxy).map((r) => {
      const envelopes = (JSON.parse(r.body.toString('utf8')) as { envelopes: unknown[] }).envelopes;
      return {
        bytes: r.body.length,
        envelopes: envelopes.length,
        wide: envelopes.filter((e) => JSON.stringify(e).length > 100_000).length,
        status: r.status,
      };
    });
    for (const size of sizes) {
      expect(size.bytes).toBeLessThan(1024 * 1024);
      expect(size.envelopes).toBeLessThanOrEqual(50);
      expect(size.status).toBe(202);
    }
    expect(
      sizes
        .map((size) => size.wide)
        .filter((n) => n > 0)
        .sort(),
    ).toStrictEqual([1, 2, 2]);
    expect(sizes.length).toBeGreaterThanOrEqual(4);
  });

  it('go up to maxConcurrentUploads at once to the edge, every envelope delivered once', { timeout: 30_000 }, async () => {
    const integration = await newIntegration();
    const edge = await inProcessEdge();
    // In front of the real edge: holds each upload 50 ms and counts how many are open at once.
    let open = 0;
    let peak = 0;
    const gate = createServer((request, response) => {
      open++;
      peak = Math.max(peak, open);
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        await sleep(50);
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type', 'x-service-connection', 'x-service-signature'])
          headers[name] = String(request.headers[name] ?? '');
        const answer = await fetch(edge.url + request.url, {
          method: request.method,
          headers,
          body: request.method === 'POST' ? Buffer.concat(chunks) : undefined,
        });
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(await answer.text());
        open--;
      });
    });
    await new Promise<void>((done) => gate.listen(0, '127.0.0.1', done));
    try {
      const collector = libraryCollector(integration, `http://127.0.0.1:${(gate.address() as AddressInfo).port}`, {
        flushIntervalMs: 10,
        maxConcurrentUploads: 3,
      });
      for (let i = 0; i < 500; i++) collector.observe(order(i));
      await collector.flush();
      expect(collector.counters()).toMatchObject({ observed: 500, delivered: 500, rejected: 0, failedBatches: 0 });
      expect(peak).toBe(3);
      expect(await storedOnce(integration.connectionId, 500)).toEqual({ rows: '500', ids: '500' });
    } finally {
      await new Promise((done) => gate.close(done));
    }
  });

  it('rejected items of a 207 are counted and never resent', async () => {
    // The Integration is an outbound queue; a collector configured inbound sends envelopes the edge refuses item by item.
    const queueIntegration = await createCollector(ctx, (await bootstrapWorkspace(ctx)).apiKey.key, {
      mode: 'sandbox',
      direction: 'outbound',
      protocol: 'queue',
    });
    const edge = await inProcessEdge();
    const proxy = await proxyTo(edge.url);
    const collector = libraryCollector({ ...queueIntegration, direction: 'inbound' }, proxy.url, {
      maxBatchSize: 10,
      retry: { initialDelayMs: 10, maxDelayMs: 20 },
    });
    const observation: Observation = { routeTemplate: 'orders.created', statusCode: 202, durationMs: 1, body: { json: { id: 'x' } } };
    for (let i = 0; i < 10; i++) collector.observe(observation);
    await collector.flush();
    for (let i = 0; i < 4; i++) collector.observe(observation);
    await collector.flush();
    await sleep(200);
    const answers = uploads(proxy);
    expect(answers.map((r) => r.status)).toStrictEqual([207, 207]);
    expect(JSON.parse(answers[0].responseBody).results[0]).toMatchObject({
      index: 0,
      accepted: false,
      issues: ['integration is not available'],
    });
    expect(collector.counters()).toMatchObject({ observed: 14, delivered: 0, rejected: 14, failedBatches: 0 });
  });
});

describe('the host process', () => {
  const script = (endpoint: string, tail: string) => `
    import { createCollector } from ${JSON.stringify(new URL('../collector/dist/index.js', import.meta.url).href)};
    const collector = createCollector({
      endpoint: ${JSON.stringify(endpoint)}, integrationKey: process.env.KEY, connectionKey: process.env.CONN, ingestToken: process.env.TOKEN,
      direction: 'outbound', protocol: 'http-api', flushIntervalMs: 20, retry: { initialDelayMs: 5000 }, requestTimeoutMs: 30000,
    });
    for (let i = 0; i < 10; i++) collector.observe({ method: 'GET', routeTemplate: '/v1/orders/{orderId}', statusCode: 200, durationMs: 1, body: { json: { id: 'x' } } });
    ${tail}
  `;

  async function run(integration: Collector, source: string): Promise<{ code: number | null; ms: number; stdout: string }> {
    const { spawn } = await import('node:child_process');
    const started = Date.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      env: { ...process.env, KEY: integration.integrationKey, CONN: integration.connectionKey, TOKEN: integration.ingestToken },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((done) => child.once('exit', (exitCode) => done(exitCode)));
    return { code, ms: Date.now() - started, stdout };
  }

  it('is never kept alive by the collector, and stays alive while it awaits flush()', { timeout: 30_000 }, async () => {
    const integration = await newIntegration();
    // Without close(): a pending retry (edge down) or an upload the edge never answers must not hold the process.
    const down = await run(integration, script(`http://127.0.0.1:${await freePort()}`, ''));
    expect(down.code).toBe(0);
    expect(down.ms).toBeLessThan(3_000);
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const hung = await run(integration, script(silent.url, 'await new Promise((done) => setTimeout(done, 100));'));
    expect(hung.code).toBe(0);
    expect(hung.ms).toBeLessThan(3_000);
    // A script that awaits flush() at its top level gets its observations delivered.
    const edge = await inProcessEdge();
    const flushed = await run(integration, script(edge.url, 'await collector.flush(); console.log(JSON.stringify(collector.counters()));'));
    expect(flushed.code).toBe(0);
    expect(JSON.parse(flushed.stdout)).toMatchObject({ observed: 10, delivered: 10 });
  });
});

describe('the wire', () => {
  it('carries no value of any observed body, in any byte sent (property, recording proxy)', { timeout: 60_000 }, async () => {
    const integration = await newIntegration();
    const edge = await inProcessEdge({
      limits: { sandboxAccountEnvelopesPerMin: 1_000_000, sandboxAccountRequestsPerMin: 1_000_000, integrationRequestsPerMin: 1_000_000 },
    });
    const proxy = await proxyTo(edge.url);
    const checks: ConnectionCheckResult[] = [];
    const collector = libraryCollector(integration, proxy.url, {
      connectionCheck: true,
      onConnectionCheck: (result) => checks.push(result),
    });
    const bodies: unknown[] = [];
    const ids: string[] = [];
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(markedValues, fc.string({ minLength: 1 }), async (body, id) => {
        runs++;
        bodies.push(body);
        ids.push(MARK + id);
        const text = JSON.stringify(body);
        collector.observe({
          ...order(0),
          body: { json: body },
          correlation: { sourceEventId: MARK + id, idempotencyKey: MARK + id },
          outcome: { businessObjectType: 'order', businessObjectId: MARK + id },
        });
        collector.observe({ ...order(0), body: { raw: text, contentType: 'application/json' } });
        collector.observe({ ...order(0), statusCode: 404, body: { raw: Buffer.from(text) } });
        await collector.flush();
      }),
      { numRuns: 40 },
    );
    await waitFor(() => checks[0], 5_000, 'the connection check');
    expect(checks[0]).toMatchObject({ ok: true, status: 200 });
    expect(collector.counters()).toMatchObject({
      observed: runs * 3,
      delivered: runs * 3,
      rejected: 0,
      buildErrors: 0,
      skippedInspections: 0,
    });

    const sent = proxy.requests;
    expect(sent.filter((r) => r.method === 'GET' && r.path === '/v1/collector/connection')).toHaveLength(1);
    expect(uploads(proxy).every((r) => r.status === 202)).toBe(true);
    let envelopes = 0;
    for (const request of sent) {
      // The raw socket bytes hold the body the edge received, and nothing of what was observed.
      expect(request.raw.includes(request.body)).toBe(true);
      const bytes = request.raw.toString('utf8');
      assertNoValues(bytes, bodies);
      for (const id of ids) expect(bytes).not.toContain(id);
      if (request.method !== 'POST') continue;
      for (const envelope of JSON.parse(request.body.toString('utf8')).envelopes) {
        assertOnlyStructure(envelope.payload.schemaShape);
        envelopes++;
      }
    }
    expect(envelopes).toBe(runs * 3);
  });
});
