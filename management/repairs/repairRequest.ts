import type pg from 'pg';
import { loadOperations } from '../../shared/analysis/contractOperations.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import { FIXTURE_REDACTION_POLICY } from '../../shared/repairs/types.js';
import { loadWorkspaceConnection, requirePathConnection } from '../connections/workspaceConnection.js';
import type { AppDeps } from '../deps.js';
import { runOperation, type OperationOutcome } from '../operations/idempotency.js';
import type { RepairActor } from './repairActor.js';
import { retainedReceipt, type CliReceipt, type RepairAction } from './receipts.js';
import { reserveRepairAdmission } from './repairAdmission.js';
import { freezeEvidence, type FrozenEvidence } from './repairEvidence.js';
import { checkRepairCapacity } from './repairLimits.js';
import { ACTIVE_PROPOSAL_STATUSES } from './repairStore.js';

/** 03 "CLI operation receipt" of `repair.request`. */
export type RepairRequestReceipt = CliReceipt<{ proposalId: string; datasetId: string; status: 'queued' }> & { replayed: boolean };

export interface RepairRequestInput {
  connectionId: string;
  incidentId: string;
  /** `{datasetId}` of the body; null for `{}`. */
  datasetId: string | null;
  idempotencyKey: string;
}

/** The kind of operation (operations.kind) and the receipt's action. */
export const REPAIR_REQUEST_ACTION = 'repair.request' satisfies RepairAction;

/** The PostgreSQL channel the analyzer's repair worker listens on (it also polls, so a lost notification costs only latency). */
export const REPAIR_PROPOSALS_CHANNEL = 'repair_proposals';

interface IncidentRow {
  id: string;
  kind: string;
  environment_id: string;
  operation_key: string;
  contract_version_id: string | null;
  observation_ids: string[];
  evidence_truncated: boolean;
  affected_records: string;
}

/** The incident of the connection (either status), or 404 `incident_not_found`. */
async function loadIncident(db: pg.PoolClient, connection: { id: string; workspaceId: string }, incidentId: string): Promise<IncidentRow> {
  const { rows } = hasIdForm(incidentId, 'inc_')
    ? await db.query<IncidentRow>(
        `SELECT id, kind, environment_id, operation_key, contract_version_id, observation_ids, evidence_truncated, affected_records
           FROM incidents WHERE id = $1 AND connection_id = $2 AND workspace_id = $3`,
        [incidentId, connection.id, connection.workspaceId],
      )
    : { rows: [] as IncidentRow[] };
  if (!rows[0]) throw new AppError('incident_not_found');
  return rows[0];
}

/**
 * The contract operation a repair of the incident would patch: only a schema-drift incident has
 * one (an unknown operation, transport errors or a missing expected outcome are not fixed by an
 * operation-schema change), and only when its contract version still declares its operation.
 */
async function repairableOperation(db: pg.PoolClient, incident: IncidentRow) {
  if (incident.kind !== 'schema-drift' || incident.contract_version_id === null) throw new AppError('incident_has_no_repair_assertion');
  const operation = (await loadOperations(db, incident.contract_version_id)).find((op) => op.operationKey === incident.operation_key);
  if (!operation) throw new AppError('incident_has_no_repair_assertion');
  return { contractVersionId: incident.contract_version_id, operation };
}

/**
 * The dataset of the frozen evidence: the one the caller named, which must be of this incident
 * (404 `replay_dataset_not_found`) and freeze the same evidence (409
 * `replay_evidence_snapshot_changed`), or the incident's dataset with the same manifest, or a
 * new one.
 */
async function datasetFor(
  db: pg.PoolClient,
  target: {
    workspaceId: string;
    connectionId: string;
    incidentId: string;
    mode: string;
    contractVersionId: string;
    operationId: string;
    operationKey: string;
  },
  evidence: FrozenEvidence,
  requestedId: string | null,
  now: Date,
): Promise<string> {
  if (requestedId !== null) {
    const { rows } = hasIdForm(requestedId, 'rds_')
      ? await db.query<{ manifest_hash: string }>(
          'SELECT manifest_hash FROM replay_datasets WHERE id = $1 AND incident_id = $2 AND connection_id = $3 AND workspace_id = $4',
          [requestedId, target.incidentId, target.connectionId, target.workspaceId],
        )
      : { rows: [] as { manifest_hash: string }[] };
    if (!rows[0]) throw new AppError('replay_dataset_not_found');
    if (rows[0].manifest_hash !== evidence.manifestHash) throw new AppError('replay_evidence_snapshot_changed');
    return requestedId;
  }
  await db.query(
    `INSERT INTO replay_datasets (id, workspace_id, connection_id, incident_id, mode, contract_version_id, contract_operation_id,
                                  operation_key, manifest_hash, fixture_count, redaction_policy_version, observation_ids, fixtures, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (incident_id, manifest_hash) DO NOTHING`,
    [
      newId('rds_'),
      target.workspaceId,
      target.connectionId,
      target.incidentId,
      target.mode,
      target.contractVersionId,
      target.operationId,
      target.operationKey,
      evidence.manifestHash,
      evidence.fixtures.length,
      FIXTURE_REDACTION_POLICY,
      evidence.fixtures.map((fixture) => fixture.observationId),
      JSON.stringify(evidence.fixtures),
      now,
    ],
  );
  const { rows } = await db.query<{ id: string }>('SELECT id FROM replay_datasets WHERE incident_id = $1 AND manifest_hash = $2', [
    target.incidentId,
    evidence.manifestHash,
  ]);
  return rows[0].id;
}

/**
 * POST /v1/cli/connections/{connectionId}/incidents/{incidentId}/repair-proposals (03 Reviewed
 * repairs): an Idempotency-Key replay answers the original receipt; otherwise, in one
 * transaction and in this order, each refusal writing nothing and giving the admission back:
 * generation disabled (503 `repair_generator_unavailable`), repair admission (429
 * `workload_rate_limited`), the exact connection and its incident (400 `connection_required`,
 * 404 `connection_not_found`, `incident_not_found`), an incident a repair cannot fix (409
 * `incident_has_no_repair_assertion`), an active proposal (409 `repair_already_pending`), the
 * Sandbox account job and monthly validations and the workspace capacity (429, repairLimits.ts),
 * the frozen evidence (repairEvidence.ts), the dataset; then the queued proposal, the receipt and
 * the audit row commit together and the repair worker is notified.
 */
export async function requestRepairProposal(deps: AppDeps, actor: RepairActor, input: RepairRequestInput): Promise<RepairRequestReceipt> {
  // The queued proposal, notified after COMMIT.
  const queued: { proposalId?: string } = {};
  const result = await runOperation(
    deps,
    {
      kind: REPAIR_REQUEST_ACTION,
      principal: actor,
      scope: 'repairs:create',
      idempotencyKey: input.idempotencyKey,
      request: { connectionId: input.connectionId, incidentId: input.incidentId, datasetId: input.datasetId },
      epochChangedCode: 'authorization_changed',
      authEpoch: actor.authEpoch,
      replay: (stored) => retainedReceipt(stored, actor),
      reserve: async () => {
        if (deps.config.management.repairGeneration !== 'enabled') throw new AppError('repair_generator_unavailable');
        return reserveRepairAdmission(deps, {
          workspaceId: actor.workspaceId,
          accountId: actor.accountId,
          userId: actor.userId,
          clientId: actor.clientId,
          action: 'request',
        });
      },
    },
    async (db) => {
      const outcome = await queueProposal(deps, db, actor, input);
      queued.proposalId = (outcome.receipt.data as { proposalId: string }).proposalId;
      return outcome;
    },
  );
  if (queued.proposalId !== undefined) {
    await deps.pool.query('SELECT pg_notify($1, $2)', [REPAIR_PROPOSALS_CHANNEL, queued.proposalId]).catch(() => undefined);
  }
  return result.body as unknown as RepairRequestReceipt;
}

async function queueProposal(deps: AppDeps, db: pg.PoolClient, actor: RepairActor, input: RepairRequestInput): Promise<OperationOutcome> {
  requirePathConnection(input.connectionId);
  const connection = await loadWorkspaceConnection(db, actor.workspaceId, input.connectionId);
  const incident = await loadIncident(db, connection, input.incidentId);
  const { contractVersionId, operation } = await repairableOperation(db, incident);

  // One account's requests one at a time: the Sandbox account job, its monthly validations, the
  // workspace capacity and the incident's one active proposal are counted by one transaction at once.
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`repair-request ${actor.accountId}`]);
  const active = await db.query<{ id: string }>('SELECT id FROM repair_proposals WHERE incident_id = $1 AND status = ANY($2)', [
    incident.id,
    ACTIVE_PROPOSAL_STATUSES,
  ]);
  if (active.rows[0]) throw new AppError('repair_already_pending', { extra: { proposalId: active.rows[0].id } });
  const now = deps.clock.now();
  await checkRepairCapacity(db, { accountId: actor.accountId, workspaceId: actor.workspaceId, mode: connection.mode, now });

  const evidence = await freezeEvidence(
    deps.clickhouse,
    {
      incidentId: incident.id,
      connectionId: connection.id,
      observationIds: incident.observation_ids,
      affectedRecords: Number(incident.affected_records),
      evidenceTruncated: incident.evidence_truncated,
    },
    operation,
  );
  const target = {
    workspaceId: actor.workspaceId,
    connectionId: connection.id,
    incidentId: incident.id,
    mode: connection.mode,
    contractVersionId,
    operationId: operation.id,
    operationKey: operation.operationKey,
  };
  const datasetId = await datasetFor(db, target, evidence, input.datasetId, now);

  const operationId = newId('cliop_');
  const proposalId = newId('rp_');
  await db.query(
    `INSERT INTO repair_proposals (id, workspace_id, account_id, connection_id, incident_id, mode, environment_id, dataset_id,
                                   contract_version_id, contract_operation_id, operation_key, status, attempts,
                                   requested_by_user_id, requested_by_client_id, request_operation_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'queued', 0, $12, $13, $14, $15, $15)`,
    [
      proposalId,
      actor.workspaceId,
      actor.accountId,
      connection.id,
      incident.id,
      connection.mode,
      incident.environment_id,
      datasetId,
      contractVersionId,
      operation.id,
      operation.operationKey,
      actor.userId,
      actor.clientId,
      operationId,
      now,
    ],
  );
  const receipt = {
    schemaVersion: 1,
    operationId,
    action: REPAIR_REQUEST_ACTION,
    targetId: incident.id,
    connectionId: connection.id,
    status: 'completed',
    data: { proposalId, datasetId, status: 'queued' },
    completedAt: now.toISOString(),
  };
  return {
    operationId,
    statusCode: 202,
    response: { ...receipt, replayed: false },
    receipt,
    integrationId: connection.integrationId,
    connectionId: connection.id,
    audit: { action: REPAIR_REQUEST_ACTION, targetId: incident.id, metadata: { connectionId: connection.id, proposalId, datasetId } },
  };
}
