import type { Queryable } from '../../shared/db/pool.js';
import { inReadSnapshot } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import { findConnectionForWorkspace, type ConnectionRecord, type Mode } from '../connections/connectionStore.js';
import { loadWorkspaceConnection, requirePathConnection } from '../connections/workspaceConnection.js';
import type { Deps } from '../deps.js';
import { decodeIncidentCursor, encodeIncidentCursor, type IncidentListBinding, type IncidentListReader } from './incidentCursor.js';
import { readIncidentDetail, readIncidentPage, type IncidentDetailView, type IncidentStatus, type IncidentView } from './incidentStore.js';
import { pageLimit } from '../pagination/pageLimit.js';

export const DEFAULT_INCIDENT_LIMIT = 25;
const MODES: readonly string[] = ['sandbox', 'live'] satisfies Mode[];
const STATUSES: readonly string[] = ['open', 'resolved'] satisfies IncidentStatus[];

/** The members of an incident list beside its connection and mode (00-decisions §5; 03 Evidence reads). */
export interface IncidentPageQuery {
  status?: string;
  limit?: string;
  cursor?: string;
}

/** The raw query of GET /v1/incidents; values are strings (no coercion). */
export interface IncidentListQuery extends IncidentPageQuery {
  integrationId?: string;
  mode?: string;
}

/** The raw query of GET /v1/incidents/{incidentId}. */
export interface IncidentDetailQuery {
  mode?: string;
}

export interface IncidentListPage {
  mode: Mode;
  items: IncidentView[];
  nextCursor: string | null;
}

/** 01 Other reads: incident reads require an explicit `mode` of `sandbox` or `live`. */
function requireMode(mode: string | undefined): Mode {
  if (mode === undefined || !MODES.includes(mode)) throw new AppError('invalid_incident_query');
  return mode as Mode;
}

/** The status filter and page size of a list query, or 400 `invalid_incident_query`. */
function pageFilters(query: IncidentPageQuery): { status: IncidentStatus | null; limit: number } {
  if (query.status !== undefined && !STATUSES.includes(query.status)) throw new AppError('invalid_incident_query');
  const status = (query.status ?? null) as IncidentStatus | null;
  return { status, limit: pageLimit(query.limit, DEFAULT_INCIDENT_LIMIT, 'invalid_incident_query') };
}

/**
 * One page of a found connection's incidents in the connection's mode, read in the caller's
 * snapshot; the cursor is checked against this reader's list (400 `invalid_incident_cursor`).
 */
async function pageOfConnection(
  db: Queryable,
  secret: Buffer,
  reader: IncidentListReader,
  connection: ConnectionRecord,
  filters: { status: IncidentStatus | null; limit: number; cursor: string | undefined },
): Promise<IncidentListPage> {
  const binding: IncidentListBinding = {
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    mode: connection.mode,
    status: filters.status,
  };
  const after = filters.cursor === undefined ? null : decodeIncidentCursor(secret, reader, filters.cursor, binding);
  const page = await readIncidentPage(db, { ...binding, after, limit: filters.limit });
  return {
    mode: connection.mode,
    items: page.items,
    nextCursor: page.hasMore && page.last ? encodeIncidentCursor(secret, reader, binding, page.last) : null,
  };
}

/**
 * GET /v1/incidents (00-decisions §5): the incidents of one exact connection (`integrationId` is
 * its `int_` id) in the mode the caller names, newest first, `limit` 1–100 (default 25).
 * Order of answers: unknown or repeated query member (400 `invalid_incident_query`), no
 * connection named (400 `connection_required`), bad `mode`, `status` or `limit` (400
 * `invalid_incident_query`), a connection that is not a live one of this workspace in that mode
 * (404 `connection_not_found`), a cursor of another list (400 `invalid_incident_cursor`).
 */
export async function listIncidents(deps: Deps, principal: WorkspacePrincipal, query: IncidentListQuery): Promise<IncidentListPage> {
  const { integrationId } = query;
  if (integrationId === undefined || integrationId === '') throw new AppError('connection_required');
  const mode = requireMode(query.mode);
  const filters = pageFilters(query);
  if (!hasIdForm(integrationId, 'int_')) throw new AppError('connection_not_found');

  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await findConnectionForWorkspace(db, principal.workspaceId, integrationId);
    // A connection of the other mode does not exist in this one (docs/decisions/analysis.md).
    if (!connection || connection.mode !== mode) throw new AppError('connection_not_found');
    return pageOfConnection(db, deps.config.secretEncryptionKey, 'api_key', connection, { ...filters, cursor: query.cursor });
  });
}

/**
 * GET /v1/incidents/{incidentId} (00-decisions §5): one incident of a live connection of this
 * workspace, in the mode the caller names. A bad `mode` is 400 `invalid_incident_query`; an
 * unknown, malformed or foreign id, or an incident of the other mode, is 404 `incident_not_found`.
 */
export async function readIncident(
  deps: Deps,
  principal: WorkspacePrincipal,
  incidentId: string,
  query: IncidentDetailQuery,
): Promise<IncidentDetailView> {
  const mode = requireMode(query.mode);
  if (!hasIdForm(incidentId, 'inc_')) throw new AppError('incident_not_found');
  return inReadSnapshot(deps.pool, async (db) => {
    const incident = await readIncidentDetail(db, principal.workspaceId, incidentId);
    if (!incident || incident.mode !== mode) throw new AppError('incident_not_found');
    return incident;
  });
}

/**
 * The CLI's list (03 Evidence reads), and the console's incidents page (`reader`): the incidents of one exact connection of the workspace, in
 * the connection's own mode. Order of answers: an empty connection segment (400
 * `connection_required`), bad `status` or `limit` (400 `invalid_incident_query`), a connection
 * that is not a live `int_` connection of the workspace (404 `connection_not_found`), a cursor of
 * another list or reader (400 `invalid_incident_cursor`).
 */
export async function listConnectionIncidents(
  deps: Deps,
  workspaceId: string,
  connectionId: string,
  query: IncidentPageQuery,
  reader: Extract<IncidentListReader, 'cli' | 'console'> = 'cli',
): Promise<IncidentListPage> {
  requirePathConnection(connectionId);
  const filters = pageFilters(query);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await loadWorkspaceConnection(db, workspaceId, connectionId);
    return pageOfConnection(db, deps.config.secretEncryptionKey, reader, connection, { ...filters, cursor: query.cursor });
  });
}

/**
 * The CLI's detail (03 Evidence reads): one incident of the path connection. An empty connection
 * segment is 400 `connection_required`; a connection that is not a live `int_` connection of the
 * workspace is 404 `connection_not_found`; an unknown or
 * malformed id, or an incident of another connection, is 404 `incident_not_found`.
 */
export async function readConnectionIncident(
  deps: Deps,
  workspaceId: string,
  connectionId: string,
  incidentId: string,
): Promise<IncidentDetailView> {
  requirePathConnection(connectionId);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await loadWorkspaceConnection(db, workspaceId, connectionId);
    const incident = hasIdForm(incidentId, 'inc_') ? await readIncidentDetail(db, workspaceId, incidentId) : null;
    if (!incident || incident.connectionId !== connection.id) throw new AppError('incident_not_found');
    return incident;
  });
}
