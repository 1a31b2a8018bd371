// The reads a decision and an export make of a proposal and the evidence it stands on: its row,
// its replay run, its frozen dataset and the contract version the export patches.

import type { Queryable } from '../../shared/db/pool.js';
import type { RepairCandidate, ReplayFixture } from '../../shared/repairs/types.js';
import type { Mode } from '../connections/connectionStore.js';

/** 03 Decision preview `review.validation`, as the validating worker stored it on the proposal. */
export interface ReviewValidation {
  id: string;
  valid: boolean;
  replayPassed: boolean;
  replayRunId: string;
  replayStatus: string;
  adapterFingerprint: string;
  schemaChecksFingerprint: string;
}

export type ProposalStatus = 'queued' | 'generating' | 'validating' | 'awaiting_approval' | 'approved' | 'rejected' | 'failed';

/** A proposal with what a decision binds and an export reads. */
export interface ProposalRecord {
  id: string;
  workspaceId: string;
  connectionId: string;
  incidentId: string;
  mode: Mode;
  datasetId: string;
  contractVersionId: string;
  contractOperationId: string;
  operationKey: string;
  status: ProposalStatus;
  candidate: RepairCandidate | null;
  candidateFingerprint: string | null;
  validation: ReviewValidation | null;
  validationRunId: string | null;
}

interface ProposalRow {
  id: string;
  workspace_id: string;
  connection_id: string;
  incident_id: string;
  mode: Mode;
  dataset_id: string;
  contract_version_id: string;
  contract_operation_id: string;
  operation_key: string;
  status: ProposalStatus;
  candidate: RepairCandidate | null;
  candidate_fingerprint: string | null;
  validation: Partial<ReviewValidation> | null;
  validation_run_id: string | null;
}

/** Only the seven members 03 names leave the stored validation, whatever else it holds. */
function validationOf(stored: Partial<ReviewValidation> | null): ReviewValidation | null {
  if (stored === null) return null;
  return {
    id: String(stored.id),
    valid: stored.valid === true,
    replayPassed: stored.replayPassed === true,
    replayRunId: String(stored.replayRunId),
    replayStatus: String(stored.replayStatus),
    adapterFingerprint: String(stored.adapterFingerprint),
    schemaChecksFingerprint: String(stored.schemaChecksFingerprint),
  };
}

/**
 * The workspace's proposal with this id on this connection, or null: a proposal of another
 * connection or workspace is not found (03 Console-facing identifiers: foreign ids answer 404).
 * `forUpdate` locks the row, which serialises decisions on it.
 */
export async function findProposal(
  db: Queryable,
  input: { workspaceId: string; connectionId: string; proposalId: string },
  options: { forUpdate?: boolean } = {},
): Promise<ProposalRecord | null> {
  const { rows } = await db.query<ProposalRow>(
    `SELECT id, workspace_id, connection_id, incident_id, mode, dataset_id, contract_version_id, contract_operation_id, operation_key,
            status, candidate, candidate_fingerprint, validation, validation_run_id
       FROM repair_proposals
      WHERE id = $1 AND workspace_id = $2 AND connection_id = $3${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [input.proposalId, input.workspaceId, input.connectionId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    connectionId: row.connection_id,
    incidentId: row.incident_id,
    mode: row.mode,
    datasetId: row.dataset_id,
    contractVersionId: row.contract_version_id,
    contractOperationId: row.contract_operation_id,
    operationKey: row.operation_key,
    status: row.status,
    candidate: row.candidate,
    candidateFingerprint: row.candidate_fingerprint,
    validation: validationOf(row.validation),
    validationRunId: row.validation_run_id,
  };
}

/** 03 "Replay run", with the counts an export reports. */
export interface ReplayRunRecord {
  id: string;
  status: 'passed' | 'failed';
  fixtureCount: number;
  conformingCount: number;
  adapterVersion: string;
  adapterFingerprint: string;
}

/** The replay run of a proposal with this id, or null. */
export async function findReplayRun(db: Queryable, proposalId: string, runId: string): Promise<ReplayRunRecord | null> {
  const { rows } = await db.query<{
    id: string;
    status: 'passed' | 'failed';
    fixture_count: number;
    conforming_count: number;
    adapter_version: string;
    adapter_fingerprint: string;
  }>(
    `SELECT id, status, fixture_count, conforming_count, adapter_version, adapter_fingerprint
       FROM replay_runs WHERE id = $1 AND proposal_id = $2`,
    [runId, proposalId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    status: row.status,
    fixtureCount: row.fixture_count,
    conformingCount: row.conforming_count,
    adapterVersion: row.adapter_version,
    adapterFingerprint: row.adapter_fingerprint,
  };
}

/** A frozen replay dataset with its fixtures (immutable once created). */
export interface DatasetRecord {
  id: string;
  manifestHash: string;
  fixtureCount: number;
  fixtures: ReplayFixture[];
}

export async function findDataset(db: Queryable, datasetId: string): Promise<DatasetRecord | null> {
  const { rows } = await db.query<{ id: string; manifest_hash: string; fixture_count: number; fixtures: ReplayFixture[] }>(
    'SELECT id, manifest_hash, fixture_count, fixtures FROM replay_datasets WHERE id = $1',
    [datasetId],
  );
  const row = rows[0];
  return row ? { id: row.id, manifestHash: row.manifest_hash, fixtureCount: row.fixture_count, fixtures: row.fixtures } : null;
}

/** What an export names of the contract version it patches: the document as registered. */
export interface ContractDocumentRecord {
  format: 'openapi' | 'json-schema';
  importedFrom: string;
  declaredVersion: string;
  document: Record<string, unknown>;
}

export async function findContractDocument(db: Queryable, versionId: string): Promise<ContractDocumentRecord | null> {
  const { rows } = await db.query<{
    format: 'openapi' | 'json-schema';
    imported_from: string;
    declared_version: string;
    document: Record<string, unknown>;
  }>('SELECT format, imported_from, declared_version, document FROM contract_versions WHERE id = $1', [versionId]);
  const row = rows[0];
  return row
    ? { format: row.format, importedFrom: row.imported_from, declaredVersion: row.declared_version, document: row.document }
    : null;
}
