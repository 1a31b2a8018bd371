import { expect } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Redis } from 'ioredis';
import { sqlLiteral } from '../../shared/clickhouse/escape.js';
import { RedisKeys } from '../../shared/redis.js';
import { usagePeriodOf } from '../../shared/usagePeriod.js';
import { spawnEdgeProcess, UNLIMITED_EDGE_ENV, type EdgeProcess } from './collector.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The real edge process (spawnEdgeProcess) with its write-ahead log in `walDir`, shipping every 200 ms. */
export function spawnWalEdge(port: number, walDir: string, env: Record<string, string> = {}): Promise<EdgeProcess> {
  return spawnEdgeProcess(port, { ...UNLIMITED_EDGE_ENV, INGEST_WAL_DIR: walDir, INGEST_SHIP_INTERVAL_MS: '200', ...env });
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
