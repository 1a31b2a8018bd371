import type { ClickHouseClient } from '@clickhouse/client';
import type { AnalysedOperation, SchemaShape } from '../../shared/analysis/types.js';
import { clickHouseErrorCode } from '../../shared/clickhouse/client.js';
import { sqlLiteral } from '../../shared/clickhouse/escape.js';
import { AppError } from '../../shared/errors/index.js';
import { fingerprint } from '../../shared/fingerprint.js';
import { replayFixtures } from '../../shared/repairs/replay.js';
import { MAX_REPLAY_FIXTURES, type ReplayFixture } from '../../shared/repairs/types.js';

/** What an incident offers as replay evidence (its `incidents` row). */
export interface IncidentEvidence {
  incidentId: string;
  connectionId: string;
  /** The first 1,000 observations (eventIds) the analyzer linked to the incident. */
  observationIds: readonly string[];
  affectedRecords: number;
  evidenceTruncated: boolean;
}

/** An incident's evidence frozen for a replay dataset (03 "Replay dataset"). */
export interface FrozenEvidence {
  /** Every inspected observation of the incident, sorted by observation id (bytewise). */
  fixtures: ReplayFixture[];
  /** `fingerprint({incidentId, contractOperationId, fixtures})`: the same evidence freezes to the same dataset. */
  manifestHash: string;
}

interface StoredShape {
  event_id: string;
  schema_inspected: number;
  schema_shape: string;
}

const bytewise = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The stored shapes of the incident's observations in one read: the first acceptance of each
 * eventId (an eventId accepted again after the de-duplication window is a later row), a row the
 * edge wrote twice collapsed by `LIMIT 1 BY` as the observation reads do. A ClickHouse failure
 * without a server answer is 503 like the other stores; a server refusal goes to the error handler.
 */
async function readShapes(clickhouse: ClickHouseClient, connectionId: string, eventIds: readonly string[]): Promise<StoredShape[]> {
  const ids = eventIds.map((id) => sqlLiteral(id)).join(', ');
  const query = `SELECT event_id, schema_inspected, schema_shape FROM observations
    WHERE connection_id = ${sqlLiteral(connectionId)} AND event_id IN (${ids})
    ORDER BY event_id, received_at_ms LIMIT 1 BY event_id`;
  try {
    return await (await clickhouse.query({ query, format: 'JSONEachRow' })).json<StoredShape>();
  } catch (error) {
    if (clickHouseErrorCode(error) !== undefined) throw error;
    throw new AppError('service_unavailable');
  }
}

/**
 * Freezes an incident's evidence against the contract operation a repair would patch (00-decisions
 * §6; 03 Replay evidence capacity, Reviewed repairs 2), or refuses with nothing written:
 * - more than 1,000 affected observations: 409 `replay_evidence_capacity_exceeded` {limit, total};
 * - an observation no longer stored (aged out of ClickHouse): 409 `repair_evidence_unavailable`;
 * - none of them inspected (`schemaInspected: false` bodies have no shape to replay): 409
 *   `replay_evidence_unavailable`;
 * - none of the inspected shapes yields a finding against the operation's schema, compared as
 *   the analyzer compares (its compiler, unchecked pointers honoured): 409
 *   `repair_evidence_unavailable` (03: no compatible findings link to the frozen observations).
 * Every inspected observation becomes a fixture, conforming or not: the candidate must accept
 * them all.
 */
export async function freezeEvidence(
  clickhouse: ClickHouseClient,
  incident: IncidentEvidence,
  operation: AnalysedOperation,
): Promise<FrozenEvidence> {
  if (
    incident.evidenceTruncated
    || incident.affectedRecords > MAX_REPLAY_FIXTURES
    || incident.observationIds.length > MAX_REPLAY_FIXTURES
  ) {
    throw new AppError('replay_evidence_capacity_exceeded', {
      extra: { limit: MAX_REPLAY_FIXTURES, total: Math.max(incident.affectedRecords, incident.observationIds.length) },
    });
  }
  const eventIds = [...new Set(incident.observationIds)];
  if (eventIds.length === 0) throw new AppError('repair_evidence_unavailable');
  const stored = await readShapes(clickhouse, incident.connectionId, eventIds);
  if (new Set(stored.map((row) => row.event_id)).size !== eventIds.length) throw new AppError('repair_evidence_unavailable');

  const inspected = stored.filter((row) => row.schema_inspected === 1).sort((a, b) => bytewise(a.event_id, b.event_id));
  if (inspected.length === 0) throw new AppError('replay_evidence_unavailable');
  const fixtures: ReplayFixture[] = inspected.map((row) => ({
    observationId: row.event_id,
    shape: JSON.parse(row.schema_shape) as SchemaShape,
  }));

  // The replay a validation runs, against the schema as it stands: evidence that already passes has nothing to repair.
  if (replayFixtures(operation.schema, operation.uncheckedPointers ?? [], fixtures).status === 'passed') {
    throw new AppError('repair_evidence_unavailable');
  }
  return { fixtures, manifestHash: fingerprint({ incidentId: incident.incidentId, contractOperationId: operation.id, fixtures }) };
}
