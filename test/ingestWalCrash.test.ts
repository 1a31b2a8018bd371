import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createCollector, envelope, postBatch, testClickHouse, ManualClock, type Collector, type EdgeAddress } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import type { EdgeProcess } from './helpers/collector.js';
import { expectStoredOnceAndBilled, spawnWalEdge } from './helpers/walEdge.js';

// Issue 17 "Done means": the real edge process (dist/ingest/main.js) with its write-ahead log,
// killed with SIGKILL under load and restarted on the same log: every envelope answered
// accepted is in ClickHouse exactly once, none is lost, no answer is a 500, the usage equals the
// distinct eventIds stored, and the edge answers 202 again within 5 s of its restart.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
const edges = new Set<EdgeProcess>();
const dirs: string[] = [];

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
});
afterAll(async () => {
  await Promise.all([...edges].map((edge) => edge.kill('SIGKILL')));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await clickhouse.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function spawnEdge(port: number, walDir: string): Promise<{ process: EdgeProcess; readyMs: number }> {
  // A 1-s insert timeout makes an admission's in-flight deadline about 8 s (shared/admissionTiming.ts).
  const process = await spawnWalEdge(port, walDir, { INGEST_INSERT_TIMEOUT_MS: '1000' });
  edges.add(process);
  return { process, readyMs: Date.now() };
}

describe('an edge with its write-ahead log killed under load', () => {
  it('loses nothing it accepted and stores each eventId once', { timeout: 180_000 }, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector: Collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    const walDir = mkdtempSync(join(tmpdir(), 'edge-wal-crash-'));
    dirs.push(walDir);
    const port = await freePort();
    const edge: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: new ManualClock() };
    const first = await spawnEdge(port, walDir);

    const batches = Array.from({ length: 400 }, () => JSON.stringify({ envelopes: Array.from({ length: 20 }, () => envelope(collector)) }));
    const accepted = new Set<number>();
    const statuses = new Map<number, number>();
    let next = 0;
    const senders = Array.from({ length: 8 }, async () => {
      while (next < batches.length) {
        const index = next++;
        const answer = await postBatch(edge, collector, batches[index]).catch(() => null);
        if (answer === null) continue;
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 202) accepted.add(index);
      }
    });
    // Kill the edge in the middle of the load.
    while (accepted.size < 60) await sleep(10);
    void first.process.kill('SIGKILL');
    await Promise.all(senders);
    const acceptedBeforeKill = accepted.size;
    expect(acceptedBeforeKill).toBeGreaterThan(0);

    const restarted = await spawnEdge(port, walDir);
    // A new batch from the restart on: how soon the edge accepts again.
    const probe = batches.push(JSON.stringify({ envelopes: Array.from({ length: 20 }, () => envelope(collector)) })) - 1;
    while ((await postBatch(edge, collector, batches[probe])).status !== 202 && Date.now() - restarted.readyMs < 15_000) await sleep(100);
    const first202Ms = Date.now() - restarted.readyMs;
    accepted.add(probe);
    // The collectors deliver what was not answered accepted, the same bodies again (a batch
    // admitted just before the kill stays in flight until its deadline, then is settled).
    for (let index = 0; index < batches.length; index++) {
      if (accepted.has(index)) continue;
      for (let attempt = 0; attempt < 50; attempt++) {
        const answer = await postBatch(edge, collector, batches[index]);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 202) {
          accepted.add(index);
          break;
        }
        expect(answer.status, answer.text).toBe(503);
        await sleep(Math.min(1_000, Number(answer.headers.get('retry-after') ?? 1) * 1000));
      }
    }
    expect(accepted.size).toBe(batches.length);
    expect(first202Ms).toBeLessThan(5_000);
    expect(statuses.get(500)).toBeUndefined();

    const total = batches.length * 20;
    await expectStoredOnceAndBilled(clickhouse, ctx.deps.redis, { connectionId: collector.connectionId, workspaceId: boot.workspace.id }, total);
  });
});
