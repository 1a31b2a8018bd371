import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { newLogDir } from './helpers/logDirs.js';
import { createCollector, testClickHouse, ManualClock, type EdgeAddress } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import type { EdgeProcess } from './helpers/collector.js';
import { BatchLoad, expectStoredOnceAndBilled, spawnWalEdge, storedCounts, viaProxy } from './helpers/walEdge.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcpProxy.js';

// Issue 17 "Done means", store faults under load against the real edge process with its
// write-ahead log: ClickHouse and Redis are reached through proxies the test cuts and restores
// (to the edge, a cut is a stopped server: connections refused, open ones reset; the servers
// themselves keep serving the other test runs of the machine).
// After recovery every envelope answered accepted is in ClickHouse exactly once, no answer was a
// 500, the usage equals the distinct eventIds stored, and the edge answers 202 again within 5 s
// of the fault's end.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let clickhouseProxy: TcpProxy;
let redisProxy: TcpProxy;
const edges = new Set<EdgeProcess>();

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  clickhouseProxy = await startTcpProxy(Number(new URL(ctx.deps.config.clickhouseUrl).port));
  redisProxy = await startTcpProxy(Number(new URL(ctx.deps.config.redisUrl).port || 6379));
});
afterAll(async () => {
  await Promise.all([...edges].map((edge) => edge.kill('SIGKILL')));
  await clickhouseProxy?.close();
  await redisProxy?.close();
  await clickhouse.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function spawnEdge(port: number): Promise<void> {
  const walDir = newLogDir('edge-wal-faults-');
  edges.add(
    await spawnWalEdge(port, walDir, {
      INGEST_INSERT_TIMEOUT_MS: '1000',
      CLICKHOUSE_URL: viaProxy(ctx.deps.config.clickhouseUrl, clickhouseProxy),
      REDIS_URL: viaProxy(ctx.deps.config.redisUrl, redisProxy),
    }),
  );
}

interface FaultRun {
  load: BatchLoad;
  connectionId: string;
  faultStartedMs: number;
  faultEndedMs: number;
  /** Milliseconds from the fault's end to the first 202 of a new batch, or null. */
  first202AfterFaultMs: number | null;
}

/**
 * 8 collectors send 20-envelope batches (each sender a batch every ~50 ms) from before `fault`
 * starts (once `faultAfter` batches were accepted) until a new batch is accepted after it ended;
 * then every batch not yet accepted is delivered again (the same body) until it is. Checks that
 * every accepted envelope is stored once, the usage equals what is stored, and no answer was a 500.
 */
async function loadThrough(fault: (connectionId: string) => Promise<void>, faultAfter: number): Promise<FaultRun> {
  const boot = await bootstrapWorkspace(ctx);
  const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
  const port = await freePort();
  await spawnEdge(port);
  const edge: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: new ManualClock() };
  const load = new BatchLoad(edge, collector);
  let over = false;
  const running = load.run(8, 50, () => over);
  const run = {
    load,
    connectionId: collector.connectionId,
    faultStartedMs: 0,
    faultEndedMs: 0,
    first202AfterFaultMs: null as number | null,
  };
  try {
    while (load.accepted.size < faultAfter) await sleep(10);
    run.faultStartedMs = Date.now();
    await fault(collector.connectionId);
    run.faultEndedMs = Date.now();
    run.first202AfterFaultMs = await load.firstAcceptedSince(run.faultEndedMs);
  } finally {
    over = true;
    await running;
  }
  await load.redeliver();
  expect(load.accepted.size).toBe(load.bodies.length);
  await expectStoredOnceAndBilled(
    clickhouse,
    ctx.deps.redis,
    { accountId: boot.account.id, connectionId: collector.connectionId, workspaceId: boot.workspace.id },
    load.envelopes,
  );
  expect(load.statuses().get(500)).toBeUndefined();
  return run;
}

describe('the edge with its write-ahead log under store faults', () => {
  it('keeps answering 202 while ClickHouse is stopped for 30 s, and ships everything once it is back', { timeout: 90_000 }, async () => {
    const storedDuringOutage: number[] = [];
    const run = await loadThrough(async (connectionId) => {
      await clickhouseProxy.cut();
      try {
        // Once what was on its way when the cut came has settled, nothing reaches ClickHouse.
        await sleep(2_000);
        storedDuringOutage.push((await storedCounts(clickhouse, connectionId)).distinct);
        await sleep(28_000);
        storedDuringOutage.push((await storedCounts(clickhouse, connectionId)).distinct);
      } finally {
        await clickhouseProxy.restore();
      }
    }, 40);
    const during = run.load.answers.filter((answer) => answer.at > run.faultStartedMs && answer.at <= run.faultEndedMs);
    // The log absorbs the load: every answer of the outage is a 202, up to its last seconds.
    expect(during.length).toBeGreaterThan(300);
    expect(during.filter((answer) => answer.status !== 202)).toEqual([]);
    expect(during.some((answer) => answer.at > run.faultEndedMs - 2_000)).toBe(true);
    expect(storedDuringOutage[1]).toBe(storedDuringOutage[0]);
    expect(run.first202AfterFaultMs).not.toBeNull();
    expect(run.first202AfterFaultMs!).toBeLessThan(5_000);
  });

  it('answers 503, never 500, while Redis is stopped, and accepts again within 5 s of its return', { timeout: 90_000 }, async () => {
    const run = await loadThrough(async () => {
      await redisProxy.cut();
      try {
        await sleep(5_000);
      } finally {
        await redisProxy.restore();
      }
    }, 40);
    const during = run.load.answers.filter((answer) => answer.at > run.faultStartedMs + 500 && answer.at <= run.faultEndedMs);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((answer) => answer.status !== 503)).toEqual([]);
    expect(run.first202AfterFaultMs).not.toBeNull();
    expect(run.first202AfterFaultMs!).toBeLessThan(5_000);
  });
});
