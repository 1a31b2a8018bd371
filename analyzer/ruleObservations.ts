import type { ClickHouseClient } from '@clickhouse/client';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { batchesWhere, type BatchRef } from '../shared/analysis/observationGroups.js';

/** What reconciliation reads of one observation (00-decisions §5 "Reconciliation"). */
export interface CorrelatedObservation {
  connectionId: string;
  eventId: string;
  eventType: string;
  businessObjectType: string;
  sourceEventIdHash: string;
  occurredAtMs: number;
}

interface Row {
  connection_id: string;
  event_id: string;
  // Aliases differ from column names: 18.16 substitutes an alias for its column in WHERE.
  type_of_event: string;
  object_type: string;
  hash: string;
  occurred: string;
}

const toObservation = (row: Row): CorrelatedObservation => ({
  connectionId: row.connection_id,
  eventId: row.event_id,
  eventType: row.type_of_event,
  businessObjectType: row.object_type,
  sourceEventIdHash: row.hash,
  occurredAtMs: Number(row.occurred),
});

/** One row per eventId of the observations matching `where` (a re-sent insert's copies merged). */
const selectCorrelated = (where: string) => `SELECT connection_id, event_id, any(event_type) AS type_of_event,
    any(business_object_type) AS object_type, any(source_event_id_hash) AS hash, any(occurred_at_ms) AS occurred
  FROM observations WHERE ${where} GROUP BY connection_id, event_id`;

const list = (values: Iterable<string>) => [...new Set(values)].map(sqlLiteral).join(', ');

/**
 * The observations of the given batches that a rule may care about: those with a correlation
 * hash whose event type is a rule's source or whose business object type is a rule's expected
 * type. One row per eventId (a re-sent insert's copies are merged by the GROUP BY), so the
 * cost follows sources and outcomes, not the batches' other observations.
 */
export async function correlatedObservationsOfBatches(
  clickhouse: ClickHouseClient,
  batches: readonly BatchRef[],
  sourceTypes: ReadonlySet<string>,
  objectTypes: ReadonlySet<string>,
): Promise<CorrelatedObservation[]> {
  if (batches.length === 0 || (sourceTypes.size === 0 && objectTypes.size === 0)) return [];
  const kinds = [
    ...(sourceTypes.size > 0 ? [`event_type IN (${list(sourceTypes)})`] : []),
    ...(objectTypes.size > 0 ? [`business_object_type IN (${list(objectTypes)})`] : []),
  ];
  const result = await clickhouse.query({
    query: selectCorrelated(`${batchesWhere(batches)} AND source_event_id_hash != '' AND (${kinds.join(' OR ')})`),
    format: 'JSONEachRow',
  });
  return (await result.json<Row>()).map(toObservation);
}

/** One connection's outcomes to look for: these hashes with these object types. */
export interface OutcomeQuery {
  connectionId: string;
  hashes: ReadonlySet<string>;
  objectTypes: ReadonlySet<string>;
  /** No outcome of these sources was received before this (their earliest occurrence, less clock skew). */
  receivedFromMs: number;
}

/**
 * Outcomes already stored for deadlines about to fire: an outcome analysed before its source
 * (another collector's batch, analysed first) found no deadline to satisfy, so the deadline looks
 * here before it fires. Only deadlines that would otherwise fire come here, a small share of all.
 */
export async function storedOutcomes(clickhouse: ClickHouseClient, queries: readonly OutcomeQuery[]): Promise<CorrelatedObservation[]> {
  if (queries.length === 0) return [];
  const where = queries
    .map(
      (q) =>
        `(connection_id = ${sqlLiteral(q.connectionId)} AND received_at_ms >= ${sqlLiteral(Math.max(0, q.receivedFromMs))}`
        + ` AND source_event_id_hash IN (${list(q.hashes)}) AND business_object_type IN (${list(q.objectTypes)}))`,
    )
    .join(' OR ');
  const result = await clickhouse.query({
    query: selectCorrelated(where),
    format: 'JSONEachRow',
  });
  return (await result.json<Row>()).map(toObservation);
}
