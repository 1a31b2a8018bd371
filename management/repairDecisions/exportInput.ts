// What an export checks and bundles (03 "Repair export bundle"; 00-decisions §6): an approved,
// validated candidate whose operation is still in the connection's active contract version with
// the schema the candidate was made against.

import type { Queryable } from '../../shared/db/pool.js';
import { loadOperations } from '../../shared/analysis/contractOperations.js';
import { AppError } from '../../shared/errors/index.js';
import { fingerprint } from '../../shared/fingerprint.js';
import type { RepairBundleInput } from '../../shared/repairs/export/bundle.js';
import type { ConnectionRecord } from '../connections/connectionStore.js';
import { readIncidentDetail } from '../incidents/incidentStore.js';
import { findApproval } from './decisionStore.js';
import { hasPassedValidation } from './decisionReview.js';
import { findContractDocument, findDataset, findReplayRun, type ProposalRecord } from './evidenceStore.js';

type PayloadLocation = RepairBundleInput['operation']['payloadLocation'];

/**
 * The export's refusals after the 404s, in this order: no passed validation (409
 * `repair_export_not_validated`); not approved (409 `repair_export_not_approved`); the patched
 * operation no longer in the connection's active contract version, or none active (409
 * `repair_export_not_available`); its schema no longer the one the candidate patches, or the
 * candidate no longer the approved one (409 `repair_export_fingerprint_mismatch`). Then the
 * bundle's input, read in the caller's transaction.
 */
export async function loadExportInput(db: Queryable, connection: ConnectionRecord, proposal: ProposalRecord): Promise<RepairBundleInput> {
  const run = proposal.validationRunId === null ? null : await findReplayRun(db, proposal.id, proposal.validationRunId);
  if (!run || !hasPassedValidation(proposal, run) || !proposal.candidate) throw new AppError('repair_export_not_validated');
  const approval = proposal.status === 'approved' ? await findApproval(db, proposal.id) : null;
  if (approval?.decision !== 'approved') throw new AppError('repair_export_not_approved');

  const activeVersionId = connection.activeContractVersionId;
  const operations = activeVersionId === null ? [] : await loadOperations(db, activeVersionId);
  const operation = operations.find((candidate) => candidate.operationKey === proposal.operationKey);
  const contract = activeVersionId === null ? null : await findContractDocument(db, activeVersionId);
  if (!operation || !contract) throw new AppError('repair_export_not_available');
  // The approval bound the candidate by its fingerprint (`fingerprint(candidate)`): the stored
  // fingerprint and the stored candidate must both still be that one.
  const approvedCandidate = approval.review.patchArtifactFingerprint;
  if (
    fingerprint(operation.schema) !== proposal.candidate.baseSchemaFingerprint
    || proposal.candidateFingerprint !== approvedCandidate
    || fingerprint(proposal.candidate) !== approvedCandidate
  ) {
    throw new AppError('repair_export_fingerprint_mismatch');
  }

  const incident = await readIncidentDetail(db, proposal.workspaceId, proposal.incidentId);
  const dataset = await findDataset(db, proposal.datasetId);
  if (!incident || !dataset) throw new AppError('repair_export_not_available');
  return {
    proposal: {
      id: proposal.id,
      incidentId: proposal.incidentId,
      connectionId: proposal.connectionId,
      mode: proposal.mode,
      operationKey: proposal.operationKey,
      contractVersionId: proposal.contractVersionId,
      datasetId: proposal.datasetId,
    },
    incident: {
      kind: incident.kind,
      summary: incident.summary,
      affectedRecords: incident.affectedRecords,
      findings: incident.findings.map((finding) => ({
        kind: finding.kind,
        path: finding.path,
        expected: finding.expected,
        observed: finding.observed,
        observationCount: finding.observationCount,
      })),
    },
    dataset: { id: dataset.id, manifestHash: dataset.manifestHash, fixtureCount: dataset.fixtureCount },
    fixtures: dataset.fixtures,
    baseSchema: operation.schema,
    candidate: proposal.candidate,
    run: {
      id: run.id,
      status: 'passed',
      fixtureCount: run.fixtureCount,
      conformingCount: run.conformingCount,
      adapterVersion: run.adapterVersion,
      adapterFingerprint: run.adapterFingerprint,
    },
    approval: { id: approval.id, approvalFingerprint: approval.approvalFingerprint, decidedAt: approval.createdAt.toISOString() },
    contract,
    operation: {
      method: operation.method,
      routeTemplate: operation.routeTemplate,
      payloadLocation: operation.payloadLocation as PayloadLocation,
      statusSelector: operation.statusSelector,
    },
  };
}
