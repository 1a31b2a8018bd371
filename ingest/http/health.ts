import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import { fixedJson, type EdgeResponse } from './edgeHttp.js';

/** `/readyz`: ready when PostgreSQL (credential loads), Redis (admission) and ClickHouse (rows) answer. */
export async function readiness(deps: { pool: Pick<pg.Pool, 'query'>; redis: Redis; clickhouse: ClickHouseClient }): Promise<EdgeResponse> {
  const [postgres, redis, clickhouse] = await Promise.allSettled([deps.pool.query('SELECT 1'), deps.redis.ping(), deps.clickhouse.ping()]);
  const clickhouseUp = clickhouse.status === 'fulfilled' && clickhouse.value.success;
  const ready = postgres.status === 'fulfilled' && redis.status === 'fulfilled' && clickhouseUp;
  return fixedJson(ready ? 200 : 503, JSON.stringify({
    status: ready ? 'ready' : 'unavailable', postgres: postgres.status === 'fulfilled', redis: redis.status === 'fulfilled', clickhouse: clickhouseUp,
  }));
}
