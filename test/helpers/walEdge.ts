import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import { sqlLiteral } from '../../shared/clickhouse/escape.js';
import { RedisKeys } from '../../shared/redis.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';

const UNLIMITED = '1000000000';
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * The real edge process (dist/ingest/main.js) with its write-ahead log in `walDir`, limits that
 * never bite, on the test stores unless `env` points elsewhere; resolves once it is healthy.
 */
export async function spawnWalEdge(port: number, walDir: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; readyMs: number }> {
  const child = spawn(process.execPath, ['dist/ingest/main.js'], {
    env: {
      ...process.env, INGEST_PORT: String(port), INGEST_WAL_DIR: walDir, INGEST_SHIP_INTERVAL_MS: '200', INGEST_WORKER_THREADS: '0',
      INGEST_INTEGRATION_REQUESTS_PER_MIN: UNLIMITED, INGEST_INTEGRATION_OBSERVATIONS_PER_MIN: UNLIMITED, INGEST_WORKSPACE_OBSERVATIONS_PER_MIN: UNLIMITED,
      ...env,
    },
    stdio: 'ignore',
  });
  const deadline = Date.now() + 20_000;
  while (!(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(child.exitCode !== null ? `the edge exited with code ${child.exitCode}` : 'edge not healthy');
    }
    await sleep(50);
  }
  return { child, readyMs: Date.now() };
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
  clickhouse: ClickHouseClient, redis: Redis, target: { connectionId: string; workspaceId: string }, total: number,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  let counts = await storedCounts(clickhouse, target.connectionId);
  while (counts.final !== total && Date.now() < deadline) {
    await sleep(200);
    counts = await storedCounts(clickhouse, target.connectionId);
  }
  expect(counts).toEqual({ final: total, distinct: total });
  const { period } = usagePeriodOf(new Date());
  expect(Number(await redis.get(RedisKeys.workspaceMonthlyUsage(target.workspaceId, period, 'live')))).toBe(total);
}
