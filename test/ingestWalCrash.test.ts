import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_DEADLINE_MIN_MS } from '../shared/admissionTiming.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { newLogDir } from './helpers/logDirs.js';
import { createCollector, testClickHouse, ManualClock, type Collector, type EdgeAddress } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import type { EdgeProcess } from './helpers/collector.js';
import { BatchLoad, expectStoredOnceAndBilled, spawnWalEdge } from './helpers/walEdge.js';

// Issue 17 "Done means": the real edge process (dist/ingest/main.js) with its write-ahead log,
// killed with SIGKILL under load and restarted on the same log: every envelope answered
// accepted is in ClickHouse exactly once, none is lost, no answer is a 500, the usage equals the
// distinct eventIds stored, and the edge answers 202 again within 5 s of its restart.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
const edges = new Set<EdgeProcess>();

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
});
afterAll(async () => {
  await Promise.all([...edges].map((edge) => edge.kill('SIGKILL')));
  await clickhouse.close();
  await ctx.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function spawnEdge(port: number, walDir: string): Promise<EdgeProcess> {
  // A batch admitted just before the kill is in flight until this deadline, then settled.
  const process = await spawnWalEdge(port, walDir, { INGEST_ADMISSION_DEADLINE_MS: String(ADMISSION_DEADLINE_MIN_MS) });
  edges.add(process);
  return process;
}

describe('an edge with its write-ahead log killed under load', () => {
  it('loses nothing it accepted and stores each eventId once', { timeout: 90_000 }, async () => {
    const boot = await bootstrapWorkspace(ctx);
    const collector: Collector = await createCollector(ctx, boot.apiKey.key, { mode: 'live' });
    const walDir = newLogDir('edge-wal-crash-');
    const port = await freePort();
    const edge: EdgeAddress = { url: `http://127.0.0.1:${port}`, clock: new ManualClock() };
    const first = await spawnEdge(port, walDir);
    const load = new BatchLoad(edge, collector);

    let killed = false;
    const running = load.run(8, 10, () => killed);
    // Killed in the middle of the load, with requests in flight.
    while (load.accepted.size < 60) await sleep(10);
    await first.kill('SIGKILL');
    killed = true;
    await running;
    expect(load.statuses().get(0) ?? 0, 'requests cut off by the kill').toBeGreaterThan(0);

    await spawnEdge(port, walDir);
    const first202Ms = await load.firstAcceptedSince(Date.now());
    await load.redeliver();

    expect(load.accepted.size).toBe(load.bodies.length);
    expect(first202Ms).not.toBeNull();
    expect(first202Ms!).toBeLessThan(5_000);
    expect(load.statuses().get(500)).toBeUndefined();
    await expectStoredOnceAndBilled(
      clickhouse,
      ctx.deps.redis,
      { accountId: boot.account.id, connectionId: collector.connectionId, workspaceId: boot.workspace.id },
      load.envelopes,
    );
  });
});
