import type { Queryable } from '../../shared/db/pool.js';
import { inReadSnapshot } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import type { ConnectionRecord, Mode } from '../connections/connectionStore.js';
import { loadWorkspaceConnection, requirePathConnection } from '../connections/workspaceConnection.js';
import type { Deps } from '../deps.js';
import { pageLimit } from '../pagination/pageLimit.js';
import { decodeRepairCursor, encodeRepairCursor, type RepairListBinding, type RepairListKind } from './repairCursor.js';
import {
  datasetView,
  proposalView,
  readDataset,
  readDatasetPage,
  readProposal,
  readProposalPage,
  readRun,
  runView,
  type DatasetView,
  type ListPosition,
  type Page,
  type ProposalListItem,
  type ProposalView,
  type RunView,
} from './repairStore.js';

/** 03 Evidence reads: lists take `limit` 1 to 100, default 25. */
export const DEFAULT_REPAIR_LIST_LIMIT = 25;

/** The raw query of a list (strings only; nothing coerced). */
export interface RepairListQuery {
  limit?: string;
  cursor?: string;
}

export interface RepairListPage<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * The path connection of a CLI evidence read: an empty segment is 400 `connection_required`, and
 * anything but a live `int_` connection of the workspace is 404 `connection_not_found`.
 */
async function pathConnection(db: Queryable, workspaceId: string, connectionId: string): Promise<ConnectionRecord> {
  requirePathConnection(connectionId);
  return loadWorkspaceConnection(db, workspaceId, connectionId);
}

/** An incident of the connection (any status), or 404 `incident_not_found`. */
async function requireIncidentOf(db: Queryable, connection: ConnectionRecord, incidentId: string): Promise<void> {
  const { rows } = hasIdForm(incidentId, 'inc_')
    ? await db.query('SELECT 1 FROM incidents WHERE id = $1 AND connection_id = $2 AND workspace_id = $3', [
        incidentId,
        connection.id,
        connection.workspaceId,
      ])
    : { rows: [] };
  if (rows.length === 0) throw new AppError('incident_not_found');
}

type PageReader<T> = (
  db: Queryable,
  input: { workspaceId: string; incidentId: string; after: ListPosition | null; limit: number },
) => Promise<Page<T>>;

/**
 * One page of an incident's list, newest first. Order of answers: an empty connection segment
 * (400 `connection_required`), a bad `limit` (400 `invalid_evidence_query`), a connection that is
 * not a live `int_` connection of the workspace (404 `connection_not_found`), an incident not of
 * that connection (404 `incident_not_found`), a cursor of another list (400
 * `invalid_evidence_cursor`).
 */
async function listOfIncident<T>(
  deps: Deps,
  kind: RepairListKind,
  read: PageReader<T>,
  target: { workspaceId: string; connectionId: string; incidentId: string },
  query: RepairListQuery,
): Promise<RepairListPage<T>> {
  requirePathConnection(target.connectionId);
  const limit = pageLimit(query.limit, DEFAULT_REPAIR_LIST_LIMIT, 'invalid_evidence_query');
  const secret = deps.config.secretEncryptionKey;
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await pathConnection(db, target.workspaceId, target.connectionId);
    await requireIncidentOf(db, connection, target.incidentId);
    const binding: RepairListBinding = { workspaceId: target.workspaceId, connectionId: connection.id, incidentId: target.incidentId };
    const after = query.cursor === undefined ? null : decodeRepairCursor(secret, kind, query.cursor, binding);
    const page = await read(db, { workspaceId: target.workspaceId, incidentId: target.incidentId, after, limit });
    return { items: page.items, nextCursor: page.hasMore && page.last ? encodeRepairCursor(secret, kind, binding, page.last) : null };
  });
}

/** GET …/incidents/{incidentId}/repair-proposals (03 Evidence reads). */
export function listIncidentProposals(
  deps: Deps,
  target: { workspaceId: string; connectionId: string; incidentId: string },
  query: RepairListQuery,
): Promise<RepairListPage<ProposalListItem>> {
  return listOfIncident(deps, 'proposals', readProposalPage, target, query);
}

/** GET …/incidents/{incidentId}/replay-datasets (03 Evidence reads). */
export function listIncidentDatasets(
  deps: Deps,
  target: { workspaceId: string; connectionId: string; incidentId: string },
  query: RepairListQuery,
): Promise<RepairListPage<DatasetView>> {
  return listOfIncident(deps, 'datasets', readDatasetPage, target, query);
}

/** GET …/repair-proposals/{proposalId}: a proposal of the path connection, or 404 `repair_proposal_not_found`. */
export async function readConnectionProposal(
  deps: Deps,
  workspaceId: string,
  connectionId: string,
  proposalId: string,
): Promise<ProposalView> {
  requirePathConnection(connectionId);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await pathConnection(db, workspaceId, connectionId);
    const row = hasIdForm(proposalId, 'rp_') ? await readProposal(db, workspaceId, proposalId) : null;
    if (!row || row.connection_id !== connection.id) throw new AppError('repair_proposal_not_found');
    return proposalView(row);
  });
}

/** GET …/replay-datasets/{datasetId}: a dataset of the path connection, or 404 `replay_dataset_not_found`. */
export async function readConnectionDataset(
  deps: Deps,
  workspaceId: string,
  connectionId: string,
  datasetId: string,
): Promise<DatasetView> {
  requirePathConnection(connectionId);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await pathConnection(db, workspaceId, connectionId);
    const row = hasIdForm(datasetId, 'rds_') ? await readDataset(db, workspaceId, datasetId) : null;
    if (!row || row.connection_id !== connection.id) throw new AppError('replay_dataset_not_found');
    return datasetView(row);
  });
}

/** GET …/replay-runs/{runId}: a run of the path connection, or 404 `replay_run_not_found`. */
export async function readConnectionRun(deps: Deps, workspaceId: string, connectionId: string, runId: string): Promise<RunView> {
  requirePathConnection(connectionId);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await pathConnection(db, workspaceId, connectionId);
    const row = hasIdForm(runId, 'rrun_') ? await readRun(db, workspaceId, runId) : null;
    if (!row || row.connection_id !== connection.id) throw new AppError('replay_run_not_found');
    return runView(row);
  });
}

const MODES: readonly string[] = ['sandbox', 'live'] satisfies Mode[];

/**
 * GET /v1/repair-proposals/{proposalId}?mode=sandbox|live (00-decisions §5): a proposal of a live
 * connection of the workspace in the mode the caller names (required, as the incident read's). A
 * missing or bad `mode` is 400 `invalid_evidence_query`; an unknown, malformed or foreign id, or
 * a proposal of the other mode, is 404 `repair_proposal_not_found`.
 */
export async function readProposalInMode(
  deps: Deps,
  principal: WorkspacePrincipal,
  proposalId: string,
  mode: string | undefined,
): Promise<ProposalView> {
  if (mode === undefined || !MODES.includes(mode)) throw new AppError('invalid_evidence_query');
  return inReadSnapshot(deps.pool, async (db) => {
    const row = hasIdForm(proposalId, 'rp_') ? await readProposal(db, principal.workspaceId, proposalId) : null;
    if (!row || row.mode !== mode) throw new AppError('repair_proposal_not_found');
    return proposalView(row);
  });
}
