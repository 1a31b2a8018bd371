import type { ClickHouseClient } from '@clickhouse/client';
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { AppError } from '../../shared/errors/index.js';
import { errorResponse, fixedJson, type EdgeResponse } from '../common/edgeHttp.js';

/**
 * What both adapters answer themselves, outside the pipeline: health, readiness, metrics, an
 * unknown route, a body over the limit, and a request met while the edge stops. Errors carry
 * the catalogue's bodies (shared/errors), as the pipeline's do.
 */

export const healthy = (): EdgeResponse => fixedJson(200, '{"status":"ok"}');

/** `/readyz`: ready when PostgreSQL (credential loads), Redis (admission) and ClickHouse (rows) answer. */
export async function readiness(deps: { pool: Pick<pg.Pool, 'query'>; redis: Redis; clickhouse: ClickHouseClient }): Promise<EdgeResponse> {
  const [postgres, redis, clickhouse] = await Promise.allSettled([deps.pool.query('SELECT 1'), deps.redis.ping(), deps.clickhouse.ping()]);
  const clickhouseUp = clickhouse.status === 'fulfilled' && clickhouse.value.success;
  const ready = postgres.status === 'fulfilled' && redis.status === 'fulfilled' && clickhouseUp;
  return fixedJson(
    ready ? 200 : 503,
    JSON.stringify({
      status: ready ? 'ready' : 'unavailable',
      postgres: postgres.status === 'fulfilled',
      redis: redis.status === 'fulfilled',
      clickhouse: clickhouseUp,
    }),
  );
}

/** `/readyz` once the edge stops accepting: load balancers move on before the listener closes. */
export const stoppingReadiness = (): EdgeResponse => fixedJson(503, '{"status":"stopping"}');

export async function metricsText(registry: Registry): Promise<EdgeResponse> {
  return { status: 200, headers: { 'content-type': registry.contentType }, body: await registry.metrics() };
}

export const notFound = (): EdgeResponse => errorResponse(new AppError('not_found'));

/** 01/03 Conventions: 413 `request_too_large`, and the connection closed by the adapter. */
export const tooLarge = (): EdgeResponse => errorResponse(new AppError('request_too_large'));

/** A request that arrives while the edge stops (the connection is closed after it). */
export const stopping = (): EdgeResponse => errorResponse(new AppError('service_unavailable'));

/** A request the adapter could not read (Fastify's own errors): 400 `invalid_request`, else 500. */
export const unreadable = (status: number): EdgeResponse =>
  errorResponse(status < 500 ? new AppError('invalid_request') : new AppError('service_unavailable', { status: 500 }));
