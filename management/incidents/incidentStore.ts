import type { Queryable } from '../../shared/db/pool.js';
import type { Mode } from '../connections/connectionStore.js';

export type IncidentStatus = 'open' | 'resolved';
export type IncidentKind = 'schema-drift' | 'unknown-operation' | 'transport-errors' | 'expected-outcome-missing';
export type ResolutionState = 'active' | 'resolved_by_contract';

/** 03 Incident (list item), plus `operationKey`. Timestamps are ISO 8601 UTC. */
export interface IncidentView {
  id: string;
  connectionId: string;
  mode: Mode;
  environmentId: string;
  operationKey: string;
  kind: IncidentKind;
  status: IncidentStatus;
  summary: string;
  affectedRecords: number;
  resolutionState: ResolutionState;
  firstObservedAt: string;
  lastObservedAt: string;
  createdAt: string;
  updatedAt: string;
  resolvedAt: string | null;
}

/** One distinct finding (kind + path) of an incident. */
export interface FindingView {
  kind: string;
  path: string;
  expected: string;
  observed: string;
  /** Only on `undeclared_field`: the schema forbids the field (`additionalProperties: false`). */
  forbidden?: boolean;
  observationCount: number;
  firstObservedAt: string;
  lastObservedAt: string;
}

/** 03 Incident detail. */
export interface IncidentDetailView extends IncidentView {
  findings: FindingView[];
  observationIds: string[];
  evidenceTruncated: boolean;
}

/**
 * The position after which the next page of a list starts. `createdAt` is PostgreSQL's own
 * microsecond text of the row's `created_at`: a JavaScript Date keeps milliseconds only, and a
 * cursor rounded to them could skip or repeat rows written within one millisecond.
 */
export interface IncidentListPosition {
  createdAt: string;
  id: string;
}

interface IncidentRow {
  id: string;
  connection_id: string;
  mode: Mode;
  environment_id: string;
  operation_key: string;
  kind: IncidentKind;
  status: IncidentStatus;
  summary: string;
  affected_records: string;
  resolution_state: ResolutionState;
  first_observed_at: Date;
  last_observed_at: Date;
  created_at: Date;
  updated_at: Date;
  resolved_at: Date | null;
  created_at_exact: string;
}

interface DetailRow extends IncidentRow {
  observation_ids: string[];
  evidence_truncated: boolean;
}

interface FindingRow {
  kind: string;
  path: string;
  expected: string;
  observed: string;
  forbidden: boolean | null;
  observation_count: string;
  first_observed_at: Date;
  last_observed_at: Date;
}

const INCIDENT_COLUMNS = `
  n.id, n.connection_id, n.mode, n.environment_id, n.operation_key, n.kind, n.status, n.summary,
  n.affected_records, n.resolution_state, n.first_observed_at, n.last_observed_at, n.created_at,
  n.updated_at, n.resolved_at,
  to_char(n.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_exact`;

function incidentView(row: IncidentRow): IncidentView {
  return {
    id: row.id,
    connectionId: row.connection_id,
    mode: row.mode,
    environmentId: row.environment_id,
    operationKey: row.operation_key,
    kind: row.kind,
    status: row.status,
    summary: row.summary,
    affectedRecords: Number(row.affected_records),
    resolutionState: row.resolution_state,
    firstObservedAt: row.first_observed_at.toISOString(),
    lastObservedAt: row.last_observed_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    resolvedAt: row.resolved_at ? row.resolved_at.toISOString() : null,
  };
}

function findingView(row: FindingRow): FindingView {
  return {
    kind: row.kind,
    path: row.path,
    expected: row.expected,
    observed: row.observed,
    ...(row.kind === 'undeclared_field' ? { forbidden: row.forbidden === true } : {}),
    observationCount: Number(row.observation_count),
    firstObservedAt: row.first_observed_at.toISOString(),
    lastObservedAt: row.last_observed_at.toISOString(),
  };
}

/**
 * One page of a connection's incidents in one mode, newest first (`createdAt` descending, then
 * `id` descending, compared bytewise), optionally of one status, after `after`. Reads
 * `limit + 1` rows so the caller knows whether another page follows (index `incidents_list`).
 */
export async function readIncidentPage(
  db: Queryable,
  input: {
    workspaceId: string;
    connectionId: string;
    mode: Mode;
    status: IncidentStatus | null;
    after: IncidentListPosition | null;
    limit: number;
  },
): Promise<{ items: IncidentView[]; hasMore: boolean; last: IncidentListPosition | null }> {
  const { rows } = await db.query<IncidentRow>(
    `SELECT ${INCIDENT_COLUMNS}
       FROM incidents n
      WHERE n.connection_id = $1 AND n.workspace_id = $2 AND n.mode = $3
        AND ($4::text IS NULL OR n.status = $4::text)
        AND ($5::timestamptz IS NULL OR n.created_at < $5::timestamptz
             OR (n.created_at = $5::timestamptz AND n.id COLLATE "C" < $6::text))
      ORDER BY n.created_at DESC, n.id COLLATE "C" DESC
      LIMIT $7`,
    [
      input.connectionId,
      input.workspaceId,
      input.mode,
      input.status,
      input.after?.createdAt ?? null,
      input.after?.id ?? null,
      input.limit + 1,
    ],
  );
  const page = rows.slice(0, input.limit);
  const lastRow = page[page.length - 1];
  return {
    items: page.map(incidentView),
    hasMore: rows.length > input.limit,
    last: lastRow ? { createdAt: lastRow.created_at_exact, id: lastRow.id } : null,
  };
}

/**
 * One incident of the workspace by exact id, with its findings sorted by path then kind
 * (bytewise), or null. An incident of a deleted connection, or of a deleted Integration, is null
 * like one of another workspace: its connection no longer exists for any read.
 */
export async function readIncidentDetail(db: Queryable, workspaceId: string, incidentId: string): Promise<IncidentDetailView | null> {
  const { rows } = await db.query<DetailRow>(
    `SELECT ${INCIDENT_COLUMNS}, n.observation_ids, n.evidence_truncated
       FROM incidents n
       JOIN connections c ON c.id = n.connection_id
       JOIN integrations i ON i.id = c.integration_id
      WHERE n.id = $1 AND n.workspace_id = $2 AND c.workspace_id = $2
        AND c.deleted_at IS NULL AND i.deleted_at IS NULL`,
    [incidentId, workspaceId],
  );
  const row = rows[0];
  if (!row) return null;
  const findings = await db.query<FindingRow>(
    `SELECT kind, path, expected, observed, forbidden, observation_count, first_observed_at, last_observed_at
       FROM incident_findings WHERE incident_id = $1
      ORDER BY path COLLATE "C", kind COLLATE "C"`,
    [incidentId],
  );
  return {
    ...incidentView(row),
    findings: findings.rows.map(findingView),
    observationIds: row.observation_ids,
    evidenceTruncated: row.evidence_truncated,
  };
}
