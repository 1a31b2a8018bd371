import type { Queryable } from '../../shared/db/pool.js';
import { ERROR_CATALOGUE } from '../../shared/errors/index.js';
import type { Mode } from '../connections/connectionStore.js';

/**
 * Rows of `repair_proposals`, `replay_datasets` and `replay_runs`
 * (migrations/postgres/1732000017000_repairs.sql) and their views in 03's words ("Repair
 * proposal", "Replay dataset and run"). Reads name the workspace, and a proposal, dataset or run
 * of a deleted connection or Integration is not found, as an incident of one is not.
 */

export type ProposalStatus = 'queued' | 'generating' | 'validating' | 'awaiting_approval' | 'approved' | 'rejected' | 'failed';

/** 03 Limits "one in-progress proposal per incident": the statuses of `repair_proposals_one_active`. */
export const ACTIVE_PROPOSAL_STATUSES: readonly ProposalStatus[] = ['queued', 'generating', 'validating', 'awaiting_approval'];
/** A worker holds or will hold these: what the Sandbox account job and the workspace capacity count. */
export const IN_PROGRESS_PROPOSAL_STATUSES: readonly ProposalStatus[] = ['queued', 'generating', 'validating'];

/** 03 Decision preview `review.validation`, as the validation worker stores it. */
export interface ProposalValidation {
  id: string;
  valid: boolean;
  replayPassed: boolean;
  replayRunId: string | null;
  replayStatus: string | null;
  adapterFingerprint: string | null;
  schemaChecksFingerprint: string | null;
}

/** The decision of a decided proposal. */
export interface ProposalDecision {
  status: 'approved' | 'rejected';
  approvalRecordId: string;
  decidedAt: string;
}

export interface ProposalRow {
  id: string;
  workspace_id: string;
  account_id: string;
  connection_id: string;
  incident_id: string;
  mode: Mode;
  environment_id: string;
  dataset_id: string;
  contract_version_id: string;
  contract_operation_id: string;
  operation_key: string;
  status: ProposalStatus;
  error_code: string | null;
  attempts: number;
  candidate: Record<string, unknown> | null;
  candidate_fingerprint: string | null;
  validation: ProposalValidation | null;
  validation_run_id: string | null;
  decision: ProposalDecision | null;
  requested_by_user_id: string;
  requested_by_client_id: string | null;
  request_operation_id: string;
  created_at: Date;
  updated_at: Date;
  /** PostgreSQL's microsecond text of `created_at` (list cursors). */
  created_at_exact: string;
}

/** 03 "Repair proposal" read. */
export interface ProposalView {
  id: string;
  incidentId: string;
  connectionId: string;
  mode: Mode;
  environmentId: string;
  status: ProposalStatus;
  createdAt: string;
  updatedAt: string;
  errorCode: string | null;
  validation: ProposalValidation | null;
  decision: ProposalDecision | null;
}

/** 03 "Repair proposal" list item. */
export interface ProposalListItem {
  id: string;
  status: ProposalStatus;
  datasetId: string | null;
  validationRunId: string | null;
  createdAt: string;
  updatedAt: string;
  errorCode: string | null;
}

export interface DatasetRow {
  id: string;
  workspace_id: string;
  connection_id: string;
  incident_id: string;
  mode: Mode;
  manifest_hash: string;
  fixture_count: number;
  redaction_policy_version: string;
  created_at: Date;
  created_at_exact: string;
}

/** 03 "Replay dataset": never its fixtures. */
export interface DatasetView {
  id: string;
  incidentId: string;
  connectionId: string;
  mode: Mode;
  manifestHash: string;
  fixtureCount: number;
  redactionPolicyVersion: string;
  createdAt: string;
}

export interface RunRow {
  id: string;
  dataset_id: string;
  connection_id: string;
  mode: Mode;
  status: 'passed' | 'failed';
  adapter_fingerprint: string;
  adapter_version: string;
  error_code: string | null;
  queued_at: Date;
  started_at: Date;
  finished_at: Date;
}

/** 03 "Replay run": no executable inputs or raw results. */
export interface RunView {
  id: string;
  datasetId: string;
  connectionId: string;
  mode: Mode;
  status: 'passed' | 'failed';
  adapterFingerprint: string;
  adapterVersion: string;
  errorCode: string | null;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
}

/** The position after which the next page of a newest-first list starts (as incident lists). */
export interface ListPosition {
  createdAt: string;
  id: string;
}

/**
 * 03: error codes are sanitized. A worker records catalogue codes (`execution_attempts_exhausted`,
 * `replay_runner_unavailable`, …); anything else is shown as `service_unavailable`, never as
 * internal detail.
 */
export function sanitizedErrorCode(code: string | null): string | null {
  if (code === null) return null;
  return Object.hasOwn(ERROR_CATALOGUE, code) ? code : 'service_unavailable';
}

const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The stored validation as 03 names it: exactly its members, a missing one null (the worker's
 * JSON is read, never trusted to be complete, so the serialiser never meets a gap).
 */
function validationView(stored: ProposalValidation | null): ProposalValidation | null {
  if (stored === null || typeof stored !== 'object') return null;
  return {
    id: String(stored.id),
    valid: stored.valid === true,
    replayPassed: stored.replayPassed === true,
    replayRunId: textOrNull(stored.replayRunId),
    replayStatus: textOrNull(stored.replayStatus),
    adapterFingerprint: textOrNull(stored.adapterFingerprint),
    schemaChecksFingerprint: textOrNull(stored.schemaChecksFingerprint),
  };
}

function decisionView(stored: ProposalDecision | null): ProposalDecision | null {
  if (stored === null || typeof stored !== 'object') return null;
  return { status: stored.status, approvalRecordId: String(stored.approvalRecordId), decidedAt: String(stored.decidedAt) };
}

export function proposalView(row: ProposalRow): ProposalView {
  return {
    id: row.id,
    incidentId: row.incident_id,
    connectionId: row.connection_id,
    mode: row.mode,
    environmentId: row.environment_id,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    errorCode: sanitizedErrorCode(row.error_code),
    validation: validationView(row.validation),
    decision: decisionView(row.decision),
  };
}

export function proposalListItem(row: ProposalRow): ProposalListItem {
  return {
    id: row.id,
    status: row.status,
    datasetId: row.dataset_id,
    validationRunId: row.validation_run_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    errorCode: sanitizedErrorCode(row.error_code),
  };
}

export function datasetView(row: DatasetRow): DatasetView {
  return {
    id: row.id,
    incidentId: row.incident_id,
    connectionId: row.connection_id,
    mode: row.mode,
    manifestHash: row.manifest_hash,
    fixtureCount: row.fixture_count,
    redactionPolicyVersion: row.redaction_policy_version,
    createdAt: row.created_at.toISOString(),
  };
}

export function runView(row: RunRow): RunView {
  return {
    id: row.id,
    datasetId: row.dataset_id,
    connectionId: row.connection_id,
    mode: row.mode,
    status: row.status,
    adapterFingerprint: row.adapter_fingerprint,
    adapterVersion: row.adapter_version,
    errorCode: sanitizedErrorCode(row.error_code),
    queuedAt: row.queued_at.toISOString(),
    startedAt: row.started_at.toISOString(),
    finishedAt: row.finished_at.toISOString(),
  };
}

const EXACT_CREATED_AT = `to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_exact`;

/** Rows whose connection and Integration are live (a deleted one's evidence is gone for every read). */
const LIVE_CONNECTION = `JOIN connections c ON c.id = r.connection_id AND c.workspace_id = r.workspace_id AND c.deleted_at IS NULL
       JOIN integrations i ON i.id = c.integration_id AND i.deleted_at IS NULL`;

/**
 * One proposal of the workspace by exact id, or null; `forUpdate` locks it (the decision routes
 * re-read it under lock).
 */
export async function readProposal(
  db: Queryable,
  workspaceId: string,
  proposalId: string,
  options: { forUpdate?: boolean } = {},
): Promise<ProposalRow | null> {
  const { rows } = await db.query<ProposalRow>(
    `SELECT r.*, ${EXACT_CREATED_AT}
       FROM repair_proposals r ${LIVE_CONNECTION}
      WHERE r.id = $1 AND r.workspace_id = $2${options.forUpdate ? ' FOR UPDATE OF r' : ''}`,
    [proposalId, workspaceId],
  );
  return rows[0] ?? null;
}

/** The keyset condition of a newest-first page after `$after` (created_at text, then id), bytewise. */
const AFTER = (at: number, id: number) =>
  `($${at}::timestamptz IS NULL OR r.created_at < $${at}::timestamptz
         OR (r.created_at = $${at}::timestamptz AND r.id COLLATE "C" < $${id}::text))`;

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  last: ListPosition | null;
}

function pageOf<R extends { id: string; created_at_exact: string }, T>(rows: R[], limit: number, view: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  const lastRow = page[page.length - 1];
  return {
    items: page.map(view),
    hasMore: rows.length > limit,
    last: lastRow ? { createdAt: lastRow.created_at_exact, id: lastRow.id } : null,
  };
}

/** One page of an incident's proposals, newest first (index `repair_proposals_list`). */
export async function readProposalPage(
  db: Queryable,
  input: { workspaceId: string; incidentId: string; after: ListPosition | null; limit: number },
): Promise<Page<ProposalListItem>> {
  const { rows } = await db.query<ProposalRow>(
    `SELECT r.*, ${EXACT_CREATED_AT}
       FROM repair_proposals r
      WHERE r.incident_id = $1 AND r.workspace_id = $2 AND ${AFTER(3, 4)}
      ORDER BY r.created_at DESC, r.id COLLATE "C" DESC
      LIMIT $5`,
    [input.incidentId, input.workspaceId, input.after?.createdAt ?? null, input.after?.id ?? null, input.limit + 1],
  );
  return pageOf(rows, input.limit, proposalListItem);
}

const DATASET_COLUMNS = `r.id, r.workspace_id, r.connection_id, r.incident_id, r.mode, r.manifest_hash, r.fixture_count,
       r.redaction_policy_version, r.created_at, ${EXACT_CREATED_AT}`;

/** One page of an incident's replay datasets, newest first (index `replay_datasets_list`). */
export async function readDatasetPage(
  db: Queryable,
  input: { workspaceId: string; incidentId: string; after: ListPosition | null; limit: number },
): Promise<Page<DatasetView>> {
  const { rows } = await db.query<DatasetRow>(
    `SELECT ${DATASET_COLUMNS}
       FROM replay_datasets r
      WHERE r.incident_id = $1 AND r.workspace_id = $2 AND ${AFTER(3, 4)}
      ORDER BY r.created_at DESC, r.id COLLATE "C" DESC
      LIMIT $5`,
    [input.incidentId, input.workspaceId, input.after?.createdAt ?? null, input.after?.id ?? null, input.limit + 1],
  );
  return pageOf(rows, input.limit, datasetView);
}

/** One replay dataset of the workspace by exact id (without its fixtures), or null. */
export async function readDataset(db: Queryable, workspaceId: string, datasetId: string): Promise<DatasetRow | null> {
  const { rows } = await db.query<DatasetRow>(
    `SELECT ${DATASET_COLUMNS} FROM replay_datasets r ${LIVE_CONNECTION} WHERE r.id = $1 AND r.workspace_id = $2`,
    [datasetId, workspaceId],
  );
  return rows[0] ?? null;
}

/** One replay run of the workspace by exact id, or null. */
export async function readRun(db: Queryable, workspaceId: string, runId: string): Promise<RunRow | null> {
  const { rows } = await db.query<RunRow>(
    `SELECT r.id, r.dataset_id, r.connection_id, r.mode, r.status, r.adapter_fingerprint, r.adapter_version, r.error_code,
            r.queued_at, r.started_at, r.finished_at
       FROM replay_runs r ${LIVE_CONNECTION} WHERE r.id = $1 AND r.workspace_id = $2`,
    [runId, workspaceId],
  );
  return rows[0] ?? null;
}
