import type { ClickHouseClient } from '@clickhouse/client';
import { clickHouseErrorCode } from '../../shared/clickhouse/client.js';
import { sqlLiteral } from '../../shared/clickhouse/escape.js';
import { AppError } from '../../shared/errors/index.js';
import type { ObservationPosition } from './observationCursor.js';
import type { StatusFilter } from './observationQuery.js';

/**
 * Named read queries of the ClickHouse `observations` table (migrations/clickhouse/0003: sorted
 * by `(connection_id, received_at_ms, event_id)`; ingest/common/observationsTable.ts writes it). Every
 * query names one connection and a receipt-time range, so the primary key narrows what is read.
 * Values reach the SQL text through sqlLiteral only (ClickHouse 18.16 has no query parameters).
 *
 * Duplicates: the edge may write a row twice (an insert retried after a lost answer); such copies
 * share the whole sort key and collapse only on merge, so reads collapse them with
 * `LIMIT 1 BY` (faster than FINAL on 18.16: docs/decisions/analysis.md).
 */

/** The columns an observation read returns (the row holds no payload values: 03 envelope). */
export interface ObservationRow {
  event_id: string;
  envelope_version: string;
  event_type: string;
  method: string;
  route_template: string;
  payload_location: string;
  status_code: number;
  duration_ms: number;
  attempt: number;
  /** UInt64 columns arrive as decimal strings. */
  occurred_at_ms: string;
  received_at_ms: string;
  observed_fingerprint: string;
  schema_fingerprint: string;
  schema_inspected: number;
  shape_hash: string;
  redaction_policy_version: string;
  source_event_id_hash: string;
  idempotency_key_hash: string;
  hash_namespace: string;
  outcome_accepted: number;
  business_object_type: string;
  business_object_id_hash: string;
  /** Only in detail reads. */
  schema_shape?: string;
}

const ROW_COLUMNS = [
  'event_id',
  'envelope_version',
  'event_type',
  'method',
  'route_template',
  'payload_location',
  'status_code',
  'duration_ms',
  'attempt',
  'occurred_at_ms',
  'received_at_ms',
  'observed_fingerprint',
  'schema_fingerprint',
  'schema_inspected',
  'lower(hex(shape_hash)) AS shape_hash',
  'redaction_policy_version',
  'source_event_id_hash',
  'idempotency_key_hash',
  'hash_namespace',
  'outcome_accepted',
  'business_object_type',
  'business_object_id_hash',
].join(', ');

/** The filters of an observation list (00-decisions §5); null members do not filter. */
export interface ObservationFilter {
  connectionId: string;
  /** Receipt time, inclusive, epoch ms. */
  fromMs: number | null;
  /** Receipt time, exclusive, epoch ms. */
  toMs: number | null;
  eventType: string | null;
  operationKey: string | null;
  status: StatusFilter | null;
}

function statusCondition(status: StatusFilter): string {
  switch (status.kind) {
    case 'class':
      return `status_code >= ${sqlLiteral(status.hundreds * 100)} AND status_code < ${sqlLiteral(status.hundreds * 100 + 100)}`;
    case 'transport_error':
      return 'status_code = 0';
    case 'code':
      return `status_code = ${sqlLiteral(status.code)}`;
  }
}

/** The WHERE clause of a list page: filters, the keyset position and an optional receipt-time floor. */
function listConditions(filter: ObservationFilter, after: ObservationPosition | null, floorMs: number | null): string {
  const conditions = [`connection_id = ${sqlLiteral(filter.connectionId)}`];
  const lower = Math.max(filter.fromMs ?? 0, floorMs ?? 0);
  if (lower > 0) conditions.push(`received_at_ms >= ${sqlLiteral(lower)}`);
  if (filter.toMs !== null) conditions.push(`received_at_ms < ${sqlLiteral(Math.max(0, filter.toMs))}`);
  if (after) {
    // Spelled with a plain upper bound too, so the primary key sees the range.
    conditions.push(`received_at_ms <= ${sqlLiteral(after.receivedAtMs)}`);
    conditions.push(`(received_at_ms < ${sqlLiteral(after.receivedAtMs)} OR event_id < ${sqlLiteral(after.eventId)})`);
  }
  if (filter.eventType !== null) conditions.push(`event_type = ${sqlLiteral(filter.eventType)}`);
  if (filter.operationKey !== null) conditions.push(`operation_key = ${sqlLiteral(filter.operationKey)}`);
  if (filter.status !== null) conditions.push(statusCondition(filter.status));
  return conditions.join(' AND ');
}

/**
 * A ClickHouse failure without a server answer (unreachable, timed out) is 503 like the other
 * stores. A server refusal goes to the error handler as it is: 503 with `Retry-After` for a read
 * past its limits or a server at capacity (plugins/errorHandler.ts), 500 for any other exception,
 * which is a bug in the query.
 */
async function run<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (clickHouseErrorCode(error) !== undefined) throw error;
    throw new AppError('service_unavailable');
  }
}

async function selectRows<T>(clickhouse: ClickHouseClient, query: string): Promise<T[]> {
  return run(async () => (await clickhouse.query({ query, format: 'JSONEachRow' })).json<T>());
}

/**
 * Up to `limit` positions of the list in page order (receipt time descending, then eventId
 * descending) strictly after `after`, reading receipt times from `floorMs` up only.
 */
export async function listObservationPositions(
  clickhouse: ClickHouseClient,
  filter: ObservationFilter,
  after: ObservationPosition | null,
  floorMs: number | null,
  limit: number,
): Promise<ObservationPosition[]> {
  const rows = await selectRows<{ received_at_ms: string; event_id: string }>(
    clickhouse,
    `SELECT received_at_ms, event_id FROM observations WHERE ${listConditions(filter, after, floorMs)}
      ORDER BY received_at_ms DESC, event_id DESC LIMIT 1 BY received_at_ms, event_id LIMIT ${sqlLiteral(limit)}`,
  );
  return rows.map((row) => ({ receivedAtMs: Number(row.received_at_ms), eventId: row.event_id }));
}

/** The rows at these positions of one connection, in the order given. */
export async function readObservationsAt(
  clickhouse: ClickHouseClient,
  connectionId: string,
  positions: readonly ObservationPosition[],
): Promise<ObservationRow[]> {
  if (positions.length === 0) return [];
  const times = positions.map((position) => position.receivedAtMs);
  const keys = positions.map((position) => `(${sqlLiteral(position.receivedAtMs)}, ${sqlLiteral(position.eventId)})`).join(', ');
  const rows = await selectRows<ObservationRow>(
    clickhouse,
    `SELECT ${ROW_COLUMNS} FROM observations
      WHERE connection_id = ${sqlLiteral(connectionId)} AND received_at_ms >= ${sqlLiteral(Math.min(...times))}
        AND received_at_ms <= ${sqlLiteral(Math.max(...times))} AND (received_at_ms, event_id) IN (${keys})
      LIMIT 1 BY received_at_ms, event_id`,
  );
  const byKey = new Map(rows.map((row) => [`${row.received_at_ms}|${row.event_id}`, row]));
  return positions.flatMap((position) => byKey.get(`${position.receivedAtMs}|${position.eventId}`) ?? []);
}

/**
 * One observation of a connection by eventId, with its schemaShape; its first acceptance when
 * the edge accepted the eventId again after its de-duplication window. Reads the connection's
 * eventIds (the eventId is not a prefix of the sort key), then the matching granules only.
 */
export async function findObservation(clickhouse: ClickHouseClient, connectionId: string, eventId: string): Promise<ObservationRow | null> {
  const rows = await selectRows<ObservationRow>(
    clickhouse,
    `SELECT ${ROW_COLUMNS}, schema_shape FROM observations
      WHERE connection_id = ${sqlLiteral(connectionId)} AND event_id = ${sqlLiteral(eventId)}
      ORDER BY received_at_ms LIMIT 1`,
  );
  return rows[0] ?? null;
}

/** One operation's count in a bucket, as its parts (the operationKey is built by the caller). */
export interface OperationCount {
  method: string;
  routeTemplate: string;
  payloadLocation: string;
  statusCode: number;
  count: number;
}

export interface AnalyticsBucketRow {
  startMs: number;
  count: number;
  operations: OperationCount[];
  /** p50, p95, p99 of durationMs; null when the bucket is empty. */
  quantiles: [number, number, number] | null;
}

export interface AnalyticsResult {
  buckets: AnalyticsBucketRow[];
  totals: AnalyticsBucketRow;
}

export const DURATION_LEVELS = [0.5, 0.95, 0.99] as const;

interface AnalyticsJsonRow {
  bucket: string;
  total: string;
  operations: [string, string, string, number, string][];
  q: (number | null)[];
}

function bucketRow(row: AnalyticsJsonRow): AnalyticsBucketRow {
  const count = Number(row.total);
  const quantiles =
    row.q.length === 3 && row.q.every((value) => typeof value === 'number' && Number.isFinite(value))
      ? (row.q as [number, number, number])
      : null;
  return {
    startMs: Number(row.bucket),
    count,
    operations: row.operations.map(([method, routeTemplate, payloadLocation, statusCode, n]) => ({
      method,
      routeTemplate,
      payloadLocation,
      statusCode: Number(statusCode),
      count: Number(n),
    })),
    quantiles: count > 0 ? quantiles : null,
  };
}

/**
 * Per-bucket analytics of one connection over [fromMs, toMs) (00-decisions §5), in one query over
 * the primary-key range: distinct eventIds (`LIMIT 1 BY event_id`, so a duplicated row, or an
 * eventId accepted again inside the range, counts once), counts per operation (the operationKey
 * holds the status code, so status classes are sums of them), and exact duration quantiles
 * (`quantilesExact`: the value at 0-based position floor(level × n) of the sorted durations).
 * `WITH TOTALS` adds the whole range in the same pass. Buckets are `bucketMs` wide from the
 * epoch, so hours and days are UTC-aligned.
 */
export async function connectionAnalytics(
  clickhouse: ClickHouseClient,
  connectionId: string,
  fromMs: number,
  toMs: number,
  bucketMs: number,
): Promise<AnalyticsResult> {
  const levels = DURATION_LEVELS.map((level) => sqlLiteral(level)).join(', ');
  // PREWHERE (observationGroups.ts): the granules the key selects hold other connections' rows,
  // filtered out before the other columns are read.
  const query = `
    SELECT bucket, sum(n) AS total, groupArray((method, route_template, payload_location, status_code, n)) AS operations,
           quantilesExactMerge(${levels})(durations) AS q
      FROM (
        SELECT intDiv(received_at_ms, ${sqlLiteral(bucketMs)}) * ${sqlLiteral(bucketMs)} AS bucket,
               method, route_template, payload_location, status_code,
               count() AS n, quantilesExactState(${levels})(duration_ms) AS durations
          FROM (
            SELECT received_at_ms, method, route_template, payload_location, status_code, duration_ms
              FROM observations
          PREWHERE connection_id = ${sqlLiteral(connectionId)}
               AND received_at_ms >= ${sqlLiteral(Math.max(0, fromMs))} AND received_at_ms < ${sqlLiteral(Math.max(0, toMs))}
             LIMIT 1 BY event_id)
         GROUP BY bucket, method, route_template, payload_location, status_code)
     GROUP BY bucket WITH TOTALS
     ORDER BY bucket`;
  const result = await run(async () => (await clickhouse.query({ query, format: 'JSON' })).json<AnalyticsJsonRow>());
  const empty: AnalyticsBucketRow = { startMs: fromMs, count: 0, operations: [], quantiles: null };
  return {
    buckets: result.data.map(bucketRow),
    totals: result.totals && result.data.length > 0 ? { ...bucketRow(result.totals), startMs: fromMs } : empty,
  };
}
