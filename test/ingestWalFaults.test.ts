import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, envelope, postBatch, testClickHouse, ManualClock, type EdgeAddress } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import type { EdgeProcess } from './helpers/collector.js';
import { expectStoredOnceAndBilled, spawnWalEdge } from './helpers/walEdge.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcpProxy.js';

// Issue 17 "Done means", store faults under load against the real edge process with its
// write-ahead log: ClickHouse and Redis are reached through proxies the test cuts and restores.
// After recovery every envelope answered accepted is in ClickHouse exactly once, no answer was a
// 500, the usage equals the distinct eventIds stored, and the edge answers 202 again within 5 s
// of the fault's end.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let clickhouseProxy: TcpProxy;
let redisProxy: TcpProxy;
const edges = new Set<EdgeProcess>();
const dirs: string[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  clickhouseProxy = await startTcpProxy(Number(new URL(ctx.deps.config.clickhouseUrl).port));
  redisProxy = await startTcpProxy(Number(new URL(ctx.deps.config.redisUrl).port || 6379));
});
afterAll(async () => {
  await Promise.all([...edges].map((edge) => edge.kill('SIGKILL')));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await clickhouseProxy?.close();
  await redisProxy?.close();
  await clickhouse.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function spawnEdge(port: number): Promise<void> {
  const walDir = mkdtempSync(join(tmpdir(), 'edge-wal-faults-'));
  dirs.push(walDir);
  edges.add(await spawnWalEdge(port, walDir, {
    INGEST_INSERT_TIMEOUT_MS: '1000',
    CLICKHOUSE_URL: viaProxy(ctx.deps.config.clickhouseUrl, clickhouseProxy), REDIS_URL: viaProxy(ctx.deps.config.redisUrl, redisProxy),
  }));
}

function viaProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.port = String(proxy.port);
  return parsed.toString();
}

/**
 * 8 collectors sending 20-envelope batches; `fault` runs once `faultAfter` batches were accepted
 * and returns when the fault has ended. Then every batch not yet accepted is delivered again (the
 * same body) until it is; returns the answers' statuses and how long after the fault's end the
 * first 202 came.
 */
async function loadThrough(fault: (during: { accepted: () => number }) => Promise<void>, options: { batches: number; faultAfter: number }) {
  const boot = await bootstrapWorkspace(ctx);
  const collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
  const port = await freePort();
  await spawnEdge(port);
  const edge: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: new ManualClock() };
  const batches = Array.from({ length: options.batches }, () => JSON.stringify({ envelopes: Array.from({ length: 20 }, () => envelope(collector)) }));
  const accepted = new Set<number>();
  const statuses = new Map<number, number>();
  let faultEndedMs = 0;
  let first202AfterFaultMs: number | null = null;
  const answer = async (index: number) => {
    const reply = await postBatch(edge, collector, batches[index]);
    statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    if (reply.status === 202) accepted.add(index);
    return reply;
  };
  let next = 0;
  const load = batches.length;
  const senders = Array.from({ length: 8 }, async () => {
    while (next < load) {
      const reply = await answer(next++);
      if (reply.status !== 202) await sleep(100);
    }
  });
  const faultDone = (async () => {
    while (accepted.size < options.faultAfter) await sleep(10);
    await fault({ accepted: () => accepted.size });
    faultEndedMs = Date.now();
    // A new batch, sent every 100 ms from the fault's end: how soon the edge accepts again. (A
    // batch whose admission Redis executed but never answered stays in flight until its
    // deadline, then is settled; those are delivered again below.)
    const probe = batches.push(JSON.stringify({ envelopes: Array.from({ length: 20 }, () => envelope(collector)) })) - 1;
    while ((await answer(probe)).status !== 202 && Date.now() - faultEndedMs < 15_000) await sleep(100);
    if (accepted.has(probe)) first202AfterFaultMs = Date.now() - faultEndedMs;
  })();
  await Promise.all([...senders, faultDone]);
  for (let index = 0; index < batches.length; index++) {
    for (let attempt = 0; !accepted.has(index) && attempt < 100; attempt++) {
      const reply = await answer(index);
      if (reply.status !== 202) await sleep(200);
    }
  }
  expect(accepted.size).toBe(batches.length);
  const total = batches.length * 20;
  await expectStoredOnceAndBilled(clickhouse, ctx.deps.redis, { connectionId: collector.connectionId, workspaceId: boot.workspace.id }, total);
  expect(statuses.get(500)).toBeUndefined();
  return { statuses, first202AfterFaultMs: first202AfterFaultMs as number | null };
}

describe('the edge with its write-ahead log under store faults', () => {
  it('keeps accepting while ClickHouse is stopped, and ships everything once it is back', { timeout: 120_000 }, async () => {
    let acceptedDuringCut = 0;
    const { first202AfterFaultMs } = await loadThrough(async ({ accepted }) => {
      await clickhouseProxy.cut();
      const before = accepted();
      await sleep(5_000);
      acceptedDuringCut = accepted() - before;
      await clickhouseProxy.restore();
    }, { batches: 300, faultAfter: 40 });
    // The log absorbs the load: answers do not wait for ClickHouse.
    expect(acceptedDuringCut).toBeGreaterThan(0);
    expect(first202AfterFaultMs).not.toBeNull();
    expect(first202AfterFaultMs!).toBeLessThan(5_000);
  });

  it('answers 503, never 500, while Redis is stopped, and accepts again within 5 s of its return', { timeout: 120_000 }, async () => {
    const { statuses, first202AfterFaultMs } = await loadThrough(async () => {
      await redisProxy.cut();
      await sleep(3_000);
      await redisProxy.restore();
    }, { batches: 200, faultAfter: 40 });
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(first202AfterFaultMs).not.toBeNull();
    expect(first202AfterFaultMs!).toBeLessThan(5_000);
  });
});
