import type pg from 'pg';
import { incidentSummary, type IncidentAggregate } from '../shared/analysis/incidentAggregate.js';
import type { OpenIncidentRef } from '../shared/analysis/reanalysisPlan.js';

/**
 * The analyzer's PostgreSQL writes. Every function runs inside the caller's transaction, after
 * the caller locked the connections concerned (AnalyzedConnection rows, FOR UPDATE, in id
 * order), so two analyzers never race on one connection's incidents. A round adds to all its
 * incidents in two statements (addToIncidents.ts); a reanalysis's statements grow with the incidents
 * it recounts, never with the observations. The statements every live round sends are named
 * (`name:`), so each pooled connection parses and plans them once, not every round.
 */

export interface AnalysedConnection {
  id: string;
  workspaceId: string;
  integrationId: string;
  environmentId: string;
  mode: string;
  activeContractVersionId: string | null;
  reanalysedThroughMs: number;
}

/** Locks live connections in id order; deleted ones are left out (their observations are not analysed). */
export async function lockConnections(db: pg.PoolClient, ids: readonly string[]): Promise<Map<string, AnalysedConnection>> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    integration_id: string;
    environment_id: string;
    mode: string;
    active_contract_version_id: string | null;
    reanalysed_through_ms: string;
  }>({
    name: 'analyzer.lockConnections',
    text: `SELECT id, workspace_id, integration_id, environment_id, mode, active_contract_version_id, reanalysed_through_ms
             FROM connections WHERE id = ANY($1::text[]) AND deleted_at IS NULL ORDER BY id FOR UPDATE`,
    values: [[...new Set(ids)]],
  });
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        workspaceId: row.workspace_id,
        integrationId: row.integration_id,
        environmentId: row.environment_id,
        mode: row.mode,
        activeContractVersionId: row.active_contract_version_id,
        reanalysedThroughMs: Number(row.reanalysed_through_ms),
      },
    ]),
  );
}

/** What live analysis still owes a batch it claimed. */
export interface ClaimedBatches {
  /** Batches nothing analysed yet: their shapes are counted and their rules evaluated. */
  fresh: Set<string>;
  /** Batches a reanalysis already counted: only their rules are evaluated. */
  rulesOnly: Set<string>;
}

/**
 * Claims the batches for live analysis (analysed_batches, in the incidents and recounted-batches
 * migrations): a batch an earlier delivery committed is in neither set, so a redelivery
 * adds nothing. Waits on a batch another analyzer is committing.
 */
export async function claimBatches(db: pg.PoolClient, batchIds: readonly string[], now: Date): Promise<ClaimedBatches> {
  const claimed: ClaimedBatches = { fresh: new Set(), rulesOnly: new Set() };
  if (batchIds.length === 0) return claimed;
  const { rows } = await db.query<{ batch_id: string; recounted: boolean }>({
    name: 'analyzer.claimBatches',
    text: `INSERT INTO analysed_batches (batch_id, analysed_at) SELECT b, $2 FROM unnest($1::text[]) AS b ORDER BY b
             ON CONFLICT (batch_id) DO UPDATE SET rules_evaluated = true WHERE NOT analysed_batches.rules_evaluated
             RETURNING batch_id, recounted`,
    values: [[...new Set(batchIds)], now],
  });
  for (const row of rows) (row.recounted ? claimed.rulesOnly : claimed.fresh).add(row.batch_id);
  return claimed;
}

/**
 * Marks the batches a reanalysis counted: their live analysis then leaves their shapes alone and
 * still evaluates their rules. A batch live analysis already claimed keeps its marker.
 */
export async function markRecountedBatches(db: pg.PoolClient, batchIds: readonly string[], now: Date): Promise<void> {
  if (batchIds.length === 0) return;
  await db.query(
    `INSERT INTO analysed_batches (batch_id, analysed_at, recounted, rules_evaluated)
       SELECT b, $2, true, false FROM unnest($1::text[]) AS b ORDER BY b
       ON CONFLICT (batch_id) DO NOTHING`,
    [[...new Set(batchIds)], now],
  );
}

const at = (ms: number) => new Date(ms);

/** Replaces an incident's findings with an aggregate's (a recount's: its findings are the whole set). */
async function replaceFindings(db: pg.PoolClient, incidentId: string, aggregate: IncidentAggregate): Promise<void> {
  await db.query('DELETE FROM incident_findings WHERE incident_id = $1', [incidentId]);
  const findings = [...aggregate.findings.values()];
  await db.query(
    `INSERT INTO incident_findings (incident_id, kind, path, expected, observed, forbidden, observation_count, first_observed_at, last_observed_at)
     SELECT $1, f.kind, f.path, f.expected, f.observed, f.forbidden, f.n, f.first_at, f.last_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::bigint[], $8::timestamptz[], $9::timestamptz[])
         AS f (kind, path, expected, observed, forbidden, n, first_at, last_at)`,
    [
      incidentId,
      findings.map((f) => f.finding.kind),
      findings.map((f) => f.finding.path),
      findings.map((f) => f.finding.expected),
      findings.map((f) => f.finding.observed),
      findings.map((f) => f.finding.forbidden ?? null),
      findings.map((f) => f.count),
      findings.map((f) => at(f.firstMs)),
      findings.map((f) => at(f.lastMs)),
    ],
  );
}

/** Replaces an open incident's counts, evidence and findings with reanalysis's recount. */
export async function recountIncident(
  db: pg.PoolClient,
  incident: OpenIncidentRef,
  aggregate: IncidentAggregate,
  now: Date,
): Promise<void> {
  const findings = [...aggregate.findings.values()].map(({ finding }) => finding);
  await db.query(
    `UPDATE incidents SET affected_records = $2, observation_ids = $3, evidence_truncated = $4, first_observed_at = $5,
        last_observed_at = $6, contract_version_id = $7, updated_at = $8, summary = $9 WHERE id = $1`,
    [
      incident.id,
      aggregate.count,
      aggregate.eventIds,
      aggregate.count > aggregate.eventIds.length,
      at(aggregate.firstMs),
      at(aggregate.lastMs),
      aggregate.contractVersionId,
      now,
      incidentSummary(aggregate.kind, aggregate.operationKey, findings, aggregate.count),
    ],
  );
  await replaceFindings(db, incident.id, aggregate);
}

/** 00-decisions §5: reanalysis under a newly active contract no longer produces the incident. */
export async function resolveByContract(db: pg.PoolClient, incidentIds: readonly string[], now: Date): Promise<void> {
  if (incidentIds.length === 0) return;
  await db.query(
    `UPDATE incidents SET status = 'resolved', resolution_state = 'resolved_by_contract', resolved_at = $2, updated_at = $2
      WHERE id = ANY($1::text[]) AND status = 'open'`,
    [incidentIds, now],
  );
}

/**
 * Keeps the connection slots' evidence fields (01 Resources) equal to the incidents and
 * observations: `latestObservationMs` null leaves a slot's latest observation as it is. One
 * statement for every connection of a round, not one each: the analyzer's PostgreSQL cost
 * follows its statements per round (bench/RESULTS.md, issue 32).
 */
export async function refreshConnectionStates(
  db: pg.PoolClient,
  states: readonly { connectionId: string; latestObservationMs: number | null }[],
): Promise<void> {
  if (states.length === 0) return;
  await db.query({
    name: 'analyzer.refreshConnectionStates',
    text: `UPDATE connections c SET
              latest_observation_at = CASE WHEN s.latest IS NULL THEN c.latest_observation_at
                                           ELSE GREATEST(COALESCE(c.latest_observation_at, s.latest), s.latest) END,
              open_incident_count = (SELECT count(*) FROM incidents WHERE connection_id = c.id AND status = 'open')
             FROM unnest($1::text[], $2::timestamptz[]) AS s (id, latest)
            WHERE c.id = s.id AND c.id = ANY ($1::text[])`,
    values: [
      states.map((state) => state.connectionId),
      states.map((state) => (state.latestObservationMs === null ? null : at(state.latestObservationMs))),
    ],
  });
}
