// Generation and validation of repair proposals (00-decisions §6; 03 "Repair proposal"). The
// queue is the proposals table itself: a worker claims the oldest proposal in progress whose lease
// has run out (a queued one has none), so any number of analyzers share the work, and one that
// dies mid-generation leaves a proposal that another claims once its lease ends. Each claim counts
// an attempt; the fourth claim fails the proposal with `execution_attempts_exhausted`.

import type pg from 'pg';
import { fingerprint } from '../shared/fingerprint.js';
import { newId } from '../shared/ids.js';
import { withTransaction } from '../shared/db/transaction.js';
import { loadOperations } from '../shared/analysis/contractOperations.js';
import { replayAdapterFingerprint } from '../shared/repairs/replay.js';
import { REPLAY_ADAPTER_VERSION, type ReplayFixture } from '../shared/repairs/types.js';
import type { RepairTask, RepairWorkResult } from './repairWorker.js';

/** 03 Retired and interrupted work: repair recovery is bounded by three attempts. */
export const MAX_REPAIR_ATTEMPTS = 3;

const IN_PROGRESS = "('queued', 'generating', 'validating')";

export interface ClaimedRepair {
  id: string;
  workspaceId: string;
  connectionId: string;
  mode: string;
  datasetId: string;
  contractVersionId: string;
  contractOperationId: string;
  /** This claim's attempt number: the proposal's result is recorded only under it. */
  attempts: number;
  queuedAt: Date;
  startedAt: Date;
}

interface ClaimRow {
  id: string;
  workspace_id: string;
  connection_id: string;
  mode: string;
  dataset_id: string;
  contract_version_id: string;
  contract_operation_id: string;
  attempts: number;
  created_at: Date;
}

/**
 * Claims the oldest proposal in progress that no live worker holds, or returns null. A claim past
 * the third attempt fails the proposal instead (`execution_attempts_exhausted`) and is not
 * returned; the caller looks again at once.
 */
export async function claimRepair(pool: pg.Pool, now: Date, leaseMs: number): Promise<ClaimedRepair | 'exhausted' | null> {
  const { rows } = await pool.query<ClaimRow>(
    `WITH next AS (
       SELECT id FROM repair_proposals
        WHERE status IN ${IN_PROGRESS} AND (lease_until IS NULL OR lease_until <= $1)
        ORDER BY created_at, id COLLATE "C"
        LIMIT 1
          FOR UPDATE SKIP LOCKED)
     UPDATE repair_proposals p
        SET attempts = p.attempts + 1,
            status = CASE WHEN p.attempts + 1 > $3 THEN 'failed' ELSE 'generating' END,
            error_code = CASE WHEN p.attempts + 1 > $3 THEN 'execution_attempts_exhausted' ELSE p.error_code END,
            lease_until = CASE WHEN p.attempts + 1 > $3 THEN NULL ELSE $1::timestamptz + make_interval(secs => $2::double precision / 1000) END,
            updated_at = $1
       FROM next
      WHERE p.id = next.id
      RETURNING p.id, p.workspace_id, p.connection_id, p.mode, p.dataset_id, p.contract_version_id,
                p.contract_operation_id, p.attempts, p.created_at`,
    [now, leaseMs, MAX_REPAIR_ATTEMPTS],
  );
  const row = rows[0];
  if (!row) return null;
  if (row.attempts > MAX_REPAIR_ATTEMPTS) return 'exhausted';
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    connectionId: row.connection_id,
    mode: row.mode,
    datasetId: row.dataset_id,
    contractVersionId: row.contract_version_id,
    contractOperationId: row.contract_operation_id,
    attempts: row.attempts,
    queuedAt: row.created_at,
    startedAt: now,
  };
}

/** The worker's input: the frozen fixtures and the operation schema the incident was found against. */
export async function loadRepairTask(pool: pg.Pool, claimed: ClaimedRepair): Promise<RepairTask> {
  const { rows } = await pool.query<{ fixtures: ReplayFixture[] }>('SELECT fixtures FROM replay_datasets WHERE id = $1', [
    claimed.datasetId,
  ]);
  const operation = (await loadOperations(pool, claimed.contractVersionId)).find((entry) => entry.id === claimed.contractOperationId);
  if (!rows[0] || !operation) throw new Error(`repair ${claimed.id}: its dataset or contract operation is gone`);
  return { schema: operation.schema, uncheckedPointers: [...(operation.uncheckedPointers ?? [])], fixtures: rows[0].fixtures };
}

/**
 * What a finished worker leaves: a proposal `awaiting_approval` with its candidate and a passed
 * run; `failed` with `repair_proposal_not_patchable` when the candidate's replay does not pass,
 * or `repair_evidence_unavailable` when the fixtures already conform (nothing to change).
 */
function outcomeOf(result: RepairWorkResult): { status: 'awaiting_approval' | 'failed'; errorCode: string | null } {
  if (result.replay.status !== 'passed') return { status: 'failed', errorCode: 'repair_proposal_not_patchable' };
  if (result.candidate.patch.length === 0) return { status: 'failed', errorCode: 'repair_evidence_unavailable' };
  return { status: 'awaiting_approval', errorCode: null };
}

/**
 * Records a worker's result in one transaction: the replay run (one per proposal, by its unique
 * key), the validation, the candidate and the new status. Nothing is written when the claim is no
 * longer this worker's (its lease ran out and another attempt took the proposal): that attempt's
 * result is the one kept, so a proposal completes once with one run.
 */
export async function recordRepairResult(
  pool: pg.Pool,
  claimed: ClaimedRepair,
  result: RepairWorkResult,
  finishedAt: Date,
): Promise<'recorded' | 'superseded'> {
  return withTransaction(pool, async (db) => {
    const current = await db.query<{ status: string; attempts: number }>(
      'SELECT status, attempts FROM repair_proposals WHERE id = $1 FOR UPDATE',
      [claimed.id],
    );
    const row = current.rows[0];
    if (row?.status !== 'generating' || row.attempts !== claimed.attempts) return 'superseded';

    const { status, errorCode } = outcomeOf(result);
    const runId = newId('rrun_');
    const adapterFingerprint = replayAdapterFingerprint();
    await db.query(
      `INSERT INTO replay_runs (id, workspace_id, dataset_id, proposal_id, connection_id, mode, status, adapter_fingerprint,
                                adapter_version, error_code, fixture_count, conforming_count, queued_at, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        runId,
        claimed.workspaceId,
        claimed.datasetId,
        claimed.id,
        claimed.connectionId,
        claimed.mode,
        result.replay.status,
        adapterFingerprint,
        REPLAY_ADAPTER_VERSION,
        result.replay.status === 'passed' ? null : 'repair_proposal_not_patchable',
        result.replay.fixtureCount,
        result.replay.conformingCount,
        claimed.queuedAt,
        claimed.startedAt,
        finishedAt,
      ],
    );
    const { candidate } = result;
    const validation = {
      id: newId('rval_'),
      valid: candidate.patch.length > 0,
      replayPassed: result.replay.status === 'passed',
      replayRunId: runId,
      replayStatus: result.replay.status,
      adapterFingerprint,
      schemaChecksFingerprint: candidate.schemaFingerprint,
    };
    await db.query(
      `UPDATE repair_proposals
          SET status = $2, error_code = $3, candidate = $4, candidate_fingerprint = $5, validation = $6,
              validation_run_id = $7, lease_until = NULL, updated_at = $8
        WHERE id = $1`,
      [
        claimed.id,
        status,
        errorCode,
        JSON.stringify(candidate),
        // What a decision binds and an export checks (management/repairDecisions/exportInput.ts).
        fingerprint(candidate),
        JSON.stringify(validation),
        runId,
        finishedAt,
      ],
    );
    return 'recorded';
  });
}
