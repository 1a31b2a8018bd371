import type { ClickHouseClient } from '@clickhouse/client';
import { sqlLiteral } from '../clickhouse/escape.js';

/**
 * Observations read from ClickHouse grouped by what analysis depends on: the operation they
 * claim, whether their payload was inspected, and the SHA-256 of their shape (computed by
 * ClickHouse at insert, migrations/clickhouse/0003). One comparison serves a whole group, so the
 * analyzer's cost follows distinct shapes, and counts and evidence ids come from ClickHouse,
 * never one observation at a time through Node.
 */
export interface ObservationGroup {
  connectionId: string;
  method: string;
  routeTemplate: string;
  payloadLocation: string;
  statusCode: number;
  schemaInspected: boolean;
  /** Hex SHA-256 of the stored schemaShape text. */
  shapeHash: string;
  /**
   * The stored schemaShape JSON text, or null when the read left it out (batch reads: the
   * comparison memo rarely needs it, and loadShapes fetches the ones it does).
   */
  shape: string | null;
  /** Distinct eventIds of the group. */
  count: number;
  firstReceivedAtMs: number;
  lastReceivedAtMs: number;
  /** Up to EVIDENCE_LIMIT of the group's eventIds (any of them when it has more), sorted. */
  eventIds: string[];
}

/** 03: a replay dataset holds at most 1,000 fixtures, so an incident keeps at most that many ids. */
export const EVIDENCE_LIMIT = 1000;

/** A batch whose observations one analysis job names. */
export interface BatchRef {
  connectionId: string;
  batchId: string;
  receivedAtMs: number;
}

interface GroupRow {
  connection_id: string;
  method: string;
  route_template: string;
  payload_location: string;
  status_code: number;
  schema_inspected: number;
  shape_hex: string;
  shape?: string;
  n: string;
  first_ms: string;
  last_ms: string;
  ids: string[];
}

const GROUP_COLUMNS = 'connection_id, method, route_template, payload_location, status_code, schema_inspected, shape_hash';
const GROUP_COLUMNS_OUT =
  'connection_id, method, route_template, payload_location, status_code, schema_inspected, hex(shape_hash) AS shape_hex';

// A re-sent insert duplicates a row until ClickHouse merges it: the copies fall in the same
// group (equal values), so counts are uniqExact(event_id) and evidence ids are de-duplicated.
//
// The condition is a PREWHERE: it names only small columns (the key, batch_id), so ClickHouse
// filters the rows of each granule it reads before it reads the wide ones (schema_shape,
// event_id). As a WHERE, 18.16 does not move a key condition to PREWHERE and reads those columns
// for every row of the granules the key selects: 8,192 rows of other connections for one with a
// handful (measured: 4.8 MB and 11–150 ms for 3 rows; as PREWHERE 0.3 MB and 5–8 ms).
function groupQuery(where: string, withShapes: boolean): string {
  return `SELECT ${GROUP_COLUMNS_OUT}, ${withShapes ? 'any(schema_shape) AS shape, ' : ''}uniqExact(event_id) AS n,
      min(received_at_ms) AS first_ms, max(received_at_ms) AS last_ms, groupArray(${EVIDENCE_LIMIT})(event_id) AS ids
    FROM observations PREWHERE ${where}
    GROUP BY ${GROUP_COLUMNS}`;
}

function toGroup(row: GroupRow): ObservationGroup {
  return {
    connectionId: row.connection_id,
    method: row.method,
    routeTemplate: row.route_template,
    payloadLocation: row.payload_location,
    statusCode: Number(row.status_code),
    schemaInspected: Number(row.schema_inspected) === 1,
    shapeHash: row.shape_hex.toLowerCase(),
    shape: row.shape ?? null,
    count: Number(row.n),
    firstReceivedAtMs: Number(row.first_ms),
    lastReceivedAtMs: Number(row.last_ms),
    eventIds: [...new Set(row.ids)].sort(),
  };
}

async function selectGroups(clickhouse: ClickHouseClient, where: string, withShapes: boolean): Promise<ObservationGroup[]> {
  const result = await clickhouse.query({ query: groupQuery(where, withShapes), format: 'JSONEachRow' });
  return (await result.json<GroupRow>()).map(toGroup);
}

/**
 * The observations of the given batches, grouped, without their shape texts. The primary key is
 * used through one receipt-time range per connection; the batch ids then pick the rows (a hash
 * lookup per row, where one OR term per batch would cost a comparison per batch per row).
 */
export function groupsOfBatches(clickhouse: ClickHouseClient, batches: readonly BatchRef[]): Promise<ObservationGroup[]> {
  if (batches.length === 0) return Promise.resolve([]);
  return selectGroups(clickhouse, batchesWhere(batches), false);
}

/** The WHERE condition that picks the rows of the given (non-empty) list of batches; see groupsOfBatches. */
export function batchesWhere(batches: readonly BatchRef[]): string {
  const ranges = new Map<string, { from: number; to: number }>();
  for (const batch of batches) {
    const range = ranges.get(batch.connectionId);
    if (range === undefined) ranges.set(batch.connectionId, { from: batch.receivedAtMs, to: batch.receivedAtMs });
    else {
      range.from = Math.min(range.from, batch.receivedAtMs);
      range.to = Math.max(range.to, batch.receivedAtMs);
    }
  }
  return (
    `(${[...ranges]
      .map(
        ([connectionId, range]) =>
          `(connection_id = ${sqlLiteral(connectionId)}`
          + ` AND received_at_ms >= ${sqlLiteral(range.from)} AND received_at_ms <= ${sqlLiteral(range.to)})`,
      )
      .join(' OR ')})` + ` AND batch_id IN (${[...new Set(batches.map((batch) => batch.batchId))].map(sqlLiteral).join(', ')})`
  );
}

/** A connection's observations received in [fromMs, toMs), grouped, with their shape texts. */
export function groupsOfWindow(
  clickhouse: ClickHouseClient,
  connectionId: string,
  fromMs: number,
  toMs: number,
): Promise<ObservationGroup[]> {
  return selectGroups(
    clickhouse,
    `connection_id = ${sqlLiteral(connectionId)} AND received_at_ms >= ${sqlLiteral(fromMs)}` + ` AND received_at_ms < ${sqlLiteral(toMs)}`,
    true,
  );
}

/** Where a group's shape can be read again: its connection, receipt range and hash. */
export type ShapeLocator = Pick<ObservationGroup, 'connectionId' | 'firstReceivedAtMs' | 'lastReceivedAtMs' | 'shapeHash'>;

/** The shape texts of the given groups, by hash (each found through its group's primary-key range). */
export async function loadShapes(clickhouse: ClickHouseClient, locators: readonly ShapeLocator[]): Promise<Map<string, string>> {
  if (locators.length === 0) return new Map();
  const where = locators
    .map(
      (l) =>
        `(connection_id = ${sqlLiteral(l.connectionId)} AND received_at_ms >= ${sqlLiteral(l.firstReceivedAtMs)}`
        + ` AND received_at_ms <= ${sqlLiteral(l.lastReceivedAtMs)} AND shape_hash = unhex(${sqlLiteral(l.shapeHash)}))`,
    )
    .join(' OR ');
  const result = await clickhouse.query({
    // PREWHERE, as groupQuery's: the wide schema_shape is read only for the rows that pass.
    query: `SELECT lower(hex(shape_hash)) AS hash, any(schema_shape) AS shape FROM observations PREWHERE ${where} GROUP BY shape_hash`,
    format: 'JSONEachRow',
  });
  return new Map((await result.json<{ hash: string; shape: string }>()).map((row) => [row.hash, row.shape]));
}

/** The ids of a connection's batches received in [fromMs, toMs). */
export async function batchIdsOfWindow(
  clickhouse: ClickHouseClient,
  connectionId: string,
  fromMs: number,
  toMs: number,
): Promise<string[]> {
  const result = await clickhouse.query({
    query:
      `SELECT DISTINCT batch_id FROM observations WHERE connection_id = ${sqlLiteral(connectionId)}`
      + ` AND received_at_ms >= ${sqlLiteral(fromMs)} AND received_at_ms < ${sqlLiteral(toMs)}`,
    format: 'JSONEachRow',
  });
  return (await result.json<{ batch_id: string }>()).map((row) => row.batch_id);
}
