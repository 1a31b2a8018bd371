import { expect } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import { sqlLiteral } from '../../shared/clickhouse/escape.js';
import { RedisKeys } from '../../shared/redis.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';
import { spawnEdgeProcess, UNLIMITED_EDGE_ENV, type EdgeProcess } from './collector.js';
import { envelope, postBatch, type Collector, type EdgeAddress, type EdgeAnswer } from './ingest.js';
import type { TcpProxy } from './tcpProxy.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The real edge process (spawnEdgeProcess) with its write-ahead log in `walDir`, shipping every 200 ms. */
export function spawnWalEdge(port: number, walDir: string, env: Record<string, string> = {}): Promise<EdgeProcess> {
  return spawnEdgeProcess(port, { ...UNLIMITED_EDGE_ENV, INGEST_WAL_DIR: walDir, INGEST_SHIP_INTERVAL_MS: '200', ...env });
}

/** A store URL with its port replaced by the proxy's (the path, e.g. Redis's database, is kept). */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.port = String(proxy.port);
  return parsed.toString();
}

/** A connection's rows after FINAL, and its distinct eventIds (equal when each is stored once). */
export async function storedCounts(clickhouse: ClickHouseClient, connectionId: string): Promise<{ final: number; distinct: number }> {
  const result = await clickhouse.query({
    query: `SELECT (SELECT count() FROM observations FINAL WHERE connection_id = ${sqlLiteral(connectionId)}) AS final,
                   (SELECT uniqExact(event_id) FROM observations WHERE connection_id = ${sqlLiteral(connectionId)}) AS distinct`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ final: string; distinct: string }>();
  return { final: Number(row.final), distinct: Number(row.distinct) };
}

/**
 * Waits (up to 30 s) for a Live connection's `total` accepted envelopes to be shipped, then
 * checks each is stored exactly once and the workspace's usage this month equals what is stored.
 */
export async function expectStoredOnceAndBilled(
  clickhouse: ClickHouseClient,
  redis: Redis,
  target: { accountId: string; connectionId: string; workspaceId: string },
  total: number,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  let counts = await storedCounts(clickhouse, target.connectionId);
  while (counts.final !== total && Date.now() < deadline) {
    await sleep(200);
    counts = await storedCounts(clickhouse, target.connectionId);
  }
  expect(counts).toEqual({ final: total, distinct: total });
  const { period } = usagePeriodOf(new Date());
  expect(Number(await redis.get(RedisKeys.workspaceMonthlyUsage(target.accountId, target.workspaceId, period, 'live')))).toBe(total);
}

/** An answer slower than this is a hung request: the test fails instead of waiting for ever. */
const ANSWER_TIMEOUT_MS = 15_000;

/**
 * postBatch, bounded: null when the connection failed (the edge was killed, or is not up yet),
 * and an error when no answer came within ANSWER_TIMEOUT_MS.
 */
export async function postBounded(edge: EdgeAddress, collector: Collector, body: string): Promise<EdgeAnswer | null> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${edge.url} within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
  });
  try {
    return await Promise.race([postBatch(edge, collector, body).catch(() => null), hung]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Collectors sending unique 20-envelope batches to one edge, with every answer recorded (status
 * 0: the connection failed). Batches are kept by index so that the ones not answered 202 can be
 * delivered again with the same body, as a collector does (03).
 */
export class BatchLoad {
  static readonly ENVELOPES_PER_BATCH = 20;
  readonly bodies: string[] = [];
  readonly accepted = new Set<number>();
  readonly answers: { at: number; status: number }[] = [];

  constructor(
    private readonly edge: EdgeAddress,
    private readonly collector: Collector,
  ) {}

  newBatch(): number {
    const envelopes = Array.from({ length: BatchLoad.ENVELOPES_PER_BATCH }, () => envelope(this.collector));
    return this.bodies.push(JSON.stringify({ envelopes })) - 1;
  }

  get envelopes(): number {
    return this.bodies.length * BatchLoad.ENVELOPES_PER_BATCH;
  }

  async send(index: number): Promise<EdgeAnswer | null> {
    const answer = await postBounded(this.edge, this.collector, this.bodies[index]);
    this.answers.push({ at: Date.now(), status: answer?.status ?? 0 });
    if (answer?.status === 202) this.accepted.add(index);
    return answer;
  }

  /** `senders` collectors, each sending a new batch and then pausing `paceMs`, until `done()`. */
  async run(senders: number, paceMs: number, done: () => boolean): Promise<void> {
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (!done()) {
          await this.send(this.newBatch());
          await sleep(paceMs);
        }
      }),
    );
  }

  /**
   * A new batch, sent every 100 ms until answered 202 (at most `timeoutMs`): the milliseconds
   * from `sinceMs` to that 202, or null.
   */
  async firstAcceptedSince(sinceMs: number, timeoutMs = 15_000): Promise<number | null> {
    const probe = this.newBatch();
    while ((await this.send(probe))?.status !== 202) {
      if (Date.now() - sinceMs > timeoutMs) return null;
      await sleep(100);
    }
    return Date.now() - sinceMs;
  }

  /**
   * Delivers every batch not yet answered 202 again, the same body, honouring Retry-After (at most
   * 1 s) until it is; only 503s (and failed connections) may come before. A batch whose admission
   * ran but whose answer was lost stays in flight until its deadline, then is settled.
   */
  async redeliver(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let index = 0; index < this.bodies.length; index++) {
      while (!this.accepted.has(index)) {
        const answer = await this.send(index);
        if (answer?.status === 202) break;
        if (answer !== null) expect(answer.status, answer.text).toBe(503);
        if (Date.now() > deadline) throw new Error(`batch ${index} still not accepted after ${timeoutMs} ms`);
        await sleep(Math.min(1_000, Number(answer?.headers.get('retry-after') ?? 1) * 1000));
      }
    }
  }

  /** How many answers had each status. */
  statuses(): Map<number, number> {
    const counts = new Map<number, number>();
    for (const { status } of this.answers) counts.set(status, (counts.get(status) ?? 0) + 1);
    return counts;
  }
}
