import { AppError } from '../../shared/errors/index.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import type { AppDeps } from '../deps.js';
import { loadReadableConnection } from './observationReads.js';
import { parseTimeRange } from './observationQuery.js';
import { connectionAnalytics, type AnalyticsBucketRow, type OperationCount } from './observationStore.js';
import { operationKeyOf } from './observationViews.js';

/** The raw query of GET /v1/connections/{id}/analytics; values are strings (no coercion). */
export interface AnalyticsQuery {
  from?: string;
  to?: string;
  bucket?: string;
}

export const BUCKET_WIDTHS_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
export type BucketName = keyof typeof BUCKET_WIDTHS_MS;

/** At most this many buckets per answer (a day of minutes fits): more is 400. */
export const MAX_BUCKETS = 1500;
const DEFAULT_SPAN_MS = 24 * 3_600_000;

export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'transport_error';

export interface AnalyticsCell {
  count: number;
  statusClasses: Record<StatusClass, number>;
  operations: { operationKey: string; count: number }[];
  durationMs: { p50: number | null; p95: number | null; p99: number | null };
}

export interface ConnectionAnalyticsView {
  connectionId: string;
  from: string;
  to: string;
  bucket: BucketName;
  quantiles: 'exact';
  totals: AnalyticsCell;
  buckets: (AnalyticsCell & { start: string })[];
}

/** 03 transport rule 1: statusCode 0 is a transport error; otherwise the hundreds digit. */
export function statusClassOf(statusCode: number): StatusClass {
  if (statusCode === 0) return 'transport_error';
  return `${Math.min(5, Math.max(1, Math.floor(statusCode / 100)))}xx` as StatusClass;
}

function cell(row: AnalyticsBucketRow | undefined): AnalyticsCell {
  const statusClasses: Record<StatusClass, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, transport_error: 0 };
  const operations = new Map<string, number>();
  for (const operation of row?.operations ?? ([] as OperationCount[])) {
    statusClasses[statusClassOf(operation.statusCode)] += operation.count;
    const key = operationKeyOf(operation.method, operation.routeTemplate, operation.payloadLocation, operation.statusCode);
    operations.set(key, (operations.get(key) ?? 0) + operation.count);
  }
  const quantiles = row?.quantiles ?? null;
  return {
    count: row?.count ?? 0,
    statusClasses,
    operations: [...operations]
      .map(([operationKey, count]) => ({ operationKey, count }))
      .sort((a, b) => b.count - a.count || (a.operationKey < b.operationKey ? -1 : a.operationKey > b.operationKey ? 1 : 0)),
    durationMs: { p50: quantiles?.[0] ?? null, p95: quantiles?.[1] ?? null, p99: quantiles?.[2] ?? null },
  };
}

/**
 * GET /v1/connections/{connectionId}/analytics (00-decisions §5): per UTC bucket of receipt time,
 * the distinct observations by status class and by operationKey, and exact duration
 * p50/p95/p99. `to` defaults to now, `from` to 24 hours before `to`, `bucket` to `hour`.
 * Every bucket of the range is listed, empty ones with zero counts and null quantiles; the
 * first and last may be partial (only [from, to) is counted). Order of answers: bad query, range
 * or more than MAX_BUCKETS buckets (400 `invalid_evidence_query`), a connection that is not a
 * live one of this workspace (404 `connection_not_found`).
 */
export async function readConnectionAnalytics(
  deps: AppDeps,
  principal: Pick<WorkspacePrincipal, 'workspaceId'>,
  connectionId: string,
  query: AnalyticsQuery,
): Promise<ConnectionAnalyticsView> {
  const bucket = (query.bucket ?? 'hour') as BucketName;
  if (!Object.hasOwn(BUCKET_WIDTHS_MS, bucket)) throw new AppError('invalid_evidence_query');
  const width = BUCKET_WIDTHS_MS[bucket];
  const range = parseTimeRange(query.from, query.to);
  const toMs = range.toMs ?? deps.clock.nowMs();
  const fromMs = range.fromMs ?? toMs - DEFAULT_SPAN_MS;
  if (fromMs > toMs) throw new AppError('invalid_evidence_query');
  const firstStart = Math.floor(fromMs / width) * width;
  const bucketCount = toMs > fromMs ? Math.floor((toMs - 1) / width) - Math.floor(fromMs / width) + 1 : 0;
  if (bucketCount > MAX_BUCKETS) throw new AppError('invalid_evidence_query');

  const connection = await loadReadableConnection(deps, principal, connectionId);
  const result =
    bucketCount === 0 ? { buckets: [], totals: undefined } : await connectionAnalytics(deps.clickhouse, connection.id, fromMs, toMs, width);
  const byStart = new Map(result.buckets.map((row) => [row.startMs, row]));
  const buckets = Array.from({ length: bucketCount }, (_, index) => {
    const start = firstStart + index * width;
    return { start: new Date(start).toISOString(), ...cell(byStart.get(start)) };
  });
  return {
    connectionId: connection.id,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    bucket,
    quantiles: 'exact',
    totals: cell(result.totals),
    buckets,
  };
}
