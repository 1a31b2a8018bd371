import type pg from 'pg';
import { newId } from '../shared/ids.js';
import { incidentKey, incidentSummary, type IncidentAggregate } from '../shared/analysis/incidentAggregate.js';
import { EVIDENCE_LIMIT } from '../shared/analysis/observationGroups.js';
import type { Finding } from '../shared/analysis/types.js';
import type { AnalysedConnection } from './incidentStore.js';

/** An aggregate to add to its connection's open incident (or to open one with). */
export interface IncidentAddition {
  connection: AnalysedConnection;
  aggregate: IncidentAggregate;
}

/**
 * One statement for every incident of a round: each aggregate is added to its connection's open
 * incident (counts, evidence, time range, contract version) or opens one, its findings are
 * upserted, and every finding the touched incidents hold afterwards comes back (the rows written
 * from RETURNING, the others from the statement's snapshot, which its own writes do not change).
 * Aggregates travel as parallel arrays; their eventIds and findings as flat arrays that name their
 * aggregate by its position (`i`, 1-based as WITH ORDINALITY counts).
 */
const ADD_TO_INCIDENTS = `
WITH a AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[], $6::timestamptz[], $7::text[],
                       $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
    WITH ORDINALITY AS a (connection_id, operation_key, kind, n, first_at, last_at, contract_version_id,
                          new_id, rule_id, workspace_id, integration_id, environment_id, mode, i)
), evidence AS (
  SELECT e.i, array_agg(e.event_id ORDER BY e.o) AS event_ids
    FROM unnest($15::int[], $16::text[]) WITH ORDINALITY AS e (i, event_id, o) GROUP BY e.i
), input AS (
  SELECT a.*, COALESCE(evidence.event_ids, '{}'::text[]) AS event_ids FROM a LEFT JOIN evidence ON evidence.i = a.i
), updated AS (
  UPDATE incidents SET
      affected_records = affected_records + input.n,
      observation_ids = CASE WHEN cardinality(observation_ids) >= ${EVIDENCE_LIMIT} THEN observation_ids
                             ELSE (observation_ids || input.event_ids)[1:${EVIDENCE_LIMIT}] END,
      evidence_truncated = affected_records + input.n > LEAST(cardinality(observation_ids) + cardinality(input.event_ids), ${EVIDENCE_LIMIT}),
      first_observed_at = LEAST(first_observed_at, input.first_at), last_observed_at = GREATEST(last_observed_at, input.last_at),
      contract_version_id = input.contract_version_id, updated_at = $14
    FROM input
   WHERE incidents.connection_id = input.connection_id AND incidents.operation_key = input.operation_key
     AND incidents.kind = input.kind AND incidents.status = 'open'
  RETURNING input.i, incidents.id, incidents.affected_records
), inserted AS (
  INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status,
      resolution_state, contract_version_id, summary, affected_records, observation_ids, evidence_truncated,
      first_observed_at, last_observed_at, created_at, updated_at, rule_id)
  SELECT new_id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, 'open',
      'active', contract_version_id, '', n, event_ids, n > cardinality(event_ids), first_at, last_at, $14, $14, rule_id
    FROM input WHERE NOT EXISTS (SELECT 1 FROM updated WHERE updated.i = input.i)
  RETURNING id, affected_records
), touched AS (
  SELECT i, id, affected_records, false AS opened FROM updated
  UNION ALL
  SELECT input.i, inserted.id, inserted.affected_records, true FROM inserted JOIN input ON input.new_id = inserted.id
), written AS (
  INSERT INTO incident_findings (incident_id, kind, path, expected, observed, forbidden, observation_count, first_observed_at, last_observed_at)
  SELECT touched.id, f.kind, f.path, f.expected, f.observed, f.forbidden, f.n, f.first_at, f.last_at
    FROM unnest($17::int[], $18::text[], $19::text[], $20::text[], $21::text[], $22::boolean[], $23::bigint[], $24::timestamptz[], $25::timestamptz[])
      AS f (i, kind, path, expected, observed, forbidden, n, first_at, last_at)
    JOIN touched ON touched.i = f.i
  -- A finding written again: counts add up, the first sighting stays, the latest observation's values win.
  ON CONFLICT (incident_id, kind, path) DO UPDATE SET
    observation_count = incident_findings.observation_count + EXCLUDED.observation_count,
    first_observed_at = LEAST(incident_findings.first_observed_at, EXCLUDED.first_observed_at),
    expected = CASE WHEN EXCLUDED.last_observed_at >= incident_findings.last_observed_at THEN EXCLUDED.expected ELSE incident_findings.expected END,
    observed = CASE WHEN EXCLUDED.last_observed_at >= incident_findings.last_observed_at THEN EXCLUDED.observed ELSE incident_findings.observed END,
    forbidden = CASE WHEN EXCLUDED.last_observed_at >= incident_findings.last_observed_at THEN EXCLUDED.forbidden ELSE incident_findings.forbidden END,
    last_observed_at = GREATEST(incident_findings.last_observed_at, EXCLUDED.last_observed_at)
  RETURNING incident_id, kind, path, expected, observed
), held AS (
  SELECT incident_id, kind, path, expected, observed, 0 AS source FROM written
  UNION ALL
  SELECT f.incident_id, f.kind, f.path, f.expected, f.observed, 1 FROM incident_findings f
   WHERE f.incident_id = ANY (ARRAY(SELECT id FROM touched))
     AND NOT EXISTS (SELECT 1 FROM written w WHERE w.incident_id = f.incident_id AND w.kind = f.kind AND w.path = f.path)
)
SELECT touched.i::int AS i, touched.id, touched.affected_records, touched.opened, held.kind, held.path, held.expected, held.observed
  FROM touched LEFT JOIN held ON held.incident_id = touched.id
 ORDER BY touched.i, held.source`;

interface TouchedRow {
  i: number;
  id: string;
  affected_records: string;
  opened: boolean;
  kind: Finding['kind'] | null;
  path: string | null;
  expected: string | null;
  observed: string | null;
}

const at = (ms: number) => new Date(ms);

/**
 * Adds newly analysed observations to each aggregate's open incident, or opens one, and writes
 * the touched incidents' summaries: two statements however many incidents and connections the
 * round touches. The caller locked the connections (incidentStore.lockConnections) and claimed
 * the batches in this transaction, so nothing is added twice. At most one aggregate per
 * (connection, operationKey, kind): aggregateIncidents keys them so. Returns how many incidents
 * it opened.
 */
export async function addToIncidents(db: pg.PoolClient, additions: readonly IncidentAddition[], now: Date): Promise<number> {
  if (additions.length === 0) return 0;
  const keys = new Set(additions.map(({ aggregate: a }) => incidentKey(a.connectionId, a.operationKey, a.kind)));
  if (keys.size < additions.length) throw new Error('addToIncidents: two aggregates of one incident');
  const incidents = {
    connectionId: [] as string[],
    operationKey: [] as string[],
    kind: [] as string[],
    count: [] as number[],
    first: [] as Date[],
    last: [] as Date[],
    contractVersionId: [] as (string | null)[],
    newId: [] as string[],
    ruleId: [] as (string | null)[],
    workspaceId: [] as string[],
    integrationId: [] as string[],
    environmentId: [] as string[],
    mode: [] as string[],
  };
  const evidence = { i: [] as number[], eventId: [] as string[] };
  const findings = {
    i: [] as number[],
    kind: [] as string[],
    path: [] as string[],
    expected: [] as string[],
    observed: [] as string[],
    forbidden: [] as (boolean | null)[],
    count: [] as number[],
    first: [] as Date[],
    last: [] as Date[],
  };
  additions.forEach(({ connection, aggregate }, index) => {
    const i = index + 1;
    incidents.connectionId.push(connection.id);
    incidents.operationKey.push(aggregate.operationKey);
    incidents.kind.push(aggregate.kind);
    incidents.count.push(aggregate.count);
    incidents.first.push(at(aggregate.firstMs));
    incidents.last.push(at(aggregate.lastMs));
    incidents.contractVersionId.push(aggregate.contractVersionId);
    incidents.newId.push(newId('inc_'));
    incidents.ruleId.push(aggregate.ruleId ?? null);
    incidents.workspaceId.push(connection.workspaceId);
    incidents.integrationId.push(connection.integrationId);
    incidents.environmentId.push(connection.environmentId);
    incidents.mode.push(connection.mode);
    for (const eventId of aggregate.eventIds) {
      evidence.i.push(i);
      evidence.eventId.push(eventId);
    }
    for (const { finding, count, firstMs, lastMs } of aggregate.findings.values()) {
      findings.i.push(i);
      findings.kind.push(finding.kind);
      findings.path.push(finding.path);
      findings.expected.push(finding.expected);
      findings.observed.push(finding.observed);
      findings.forbidden.push(finding.forbidden ?? null);
      findings.count.push(count);
      findings.first.push(at(firstMs));
      findings.last.push(at(lastMs));
    }
  });
  const { rows } = await db.query<TouchedRow>({
    name: 'analyzer.addToIncidents',
    text: ADD_TO_INCIDENTS,
    values: [
      incidents.connectionId,
      incidents.operationKey,
      incidents.kind,
      incidents.count,
      incidents.first,
      incidents.last,
      incidents.contractVersionId,
      incidents.newId,
      incidents.ruleId,
      incidents.workspaceId,
      incidents.integrationId,
      incidents.environmentId,
      incidents.mode,
      now,
      evidence.i,
      evidence.eventId,
      findings.i,
      findings.kind,
      findings.path,
      findings.expected,
      findings.observed,
      findings.forbidden,
      findings.count,
      findings.first,
      findings.last,
    ],
  });
  const touched = new Map<number, { id: string; affected: number; findings: Finding[] }>();
  let opened = 0;
  for (const row of rows) {
    let incident = touched.get(row.i);
    if (incident === undefined) {
      incident = { id: row.id, affected: Number(row.affected_records), findings: [] };
      touched.set(row.i, incident);
      if (row.opened) opened++;
    }
    if (row.kind !== null) incident.findings.push({ kind: row.kind, path: row.path!, expected: row.expected!, observed: row.observed! });
  }
  const ids: string[] = [];
  const summaries: string[] = [];
  for (const [i, incident] of touched) {
    const { aggregate } = additions[i - 1];
    ids.push(incident.id);
    summaries.push(incidentSummary(aggregate.kind, aggregate.operationKey, incident.findings, incident.affected));
  }
  await db.query({
    name: 'analyzer.writeSummaries',
    text: 'UPDATE incidents SET summary = s.summary FROM unnest($1::text[], $2::text[]) AS s (id, summary) WHERE incidents.id = s.id',
    values: [ids, summaries],
  });
  return opened;
}
