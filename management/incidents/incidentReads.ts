import { inReadSnapshot } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import { findConnectionForWorkspace, type Mode } from '../connections/connectionStore.js';
import type { Deps } from '../deps.js';
import { decodeIncidentCursor, encodeIncidentCursor, type IncidentListBinding } from './incidentCursor.js';
import { readIncidentDetail, readIncidentPage, type IncidentDetailView, type IncidentStatus, type IncidentView } from './incidentStore.js';
import { pageLimit } from '../pagination/pageLimit.js';

export const DEFAULT_INCIDENT_LIMIT = 25;
const MODES: readonly string[] = ['sandbox', 'live'] satisfies Mode[];
const STATUSES: readonly string[] = ['open', 'resolved'] satisfies IncidentStatus[];

/** The raw query of GET /v1/incidents; values are strings (no coercion). */
export interface IncidentListQuery {
  integrationId?: string;
  mode?: string;
  status?: string;
  limit?: string;
  cursor?: string;
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

/**
 * GET /v1/incidents (00-decisions §5): the incidents of one exact connection (`integrationId` is
 * its `int_` id) in the mode the caller names, newest first, `limit` 1–100 (default 25).
 * Order of answers: unknown or repeated query member (400 `invalid_incident_query`), no
 * connection named (400 `connection_required`), bad `mode`, `status` or `limit` (400
 * `invalid_incident_query`), a connection that is not a live one of this workspace in that mode
 * (404 `connection_not_found`), a cursor of another list (400 `invalid_incident_cursor`).
 */
export async function listIncidents(deps: Deps, principal: ApiKeyPrincipal, query: IncidentListQuery): Promise<IncidentListPage> {
  const { integrationId } = query;
  if (integrationId === undefined || integrationId === '') throw new AppError('connection_required');
  const mode = requireMode(query.mode);
  if (query.status !== undefined && !STATUSES.includes(query.status)) throw new AppError('invalid_incident_query');
  const status = (query.status ?? null) as IncidentStatus | null;
  const limit = pageLimit(query.limit, DEFAULT_INCIDENT_LIMIT, 'invalid_incident_query');
  if (!hasIdForm(integrationId, 'int_')) throw new AppError('connection_not_found');

  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await findConnectionForWorkspace(db, principal.workspaceId, integrationId);
    // A connection of the other mode does not exist in this one (docs/decisions/analysis.md).
    if (!connection || connection.mode !== mode) throw new AppError('connection_not_found');
    const binding: IncidentListBinding = { workspaceId: principal.workspaceId, connectionId: connection.id, mode, status };
    const secret = deps.config.secretEncryptionKey;
    const after = query.cursor === undefined ? null : decodeIncidentCursor(secret, query.cursor, binding);
    const page = await readIncidentPage(db, { ...binding, after, limit });
    return {
      mode,
      items: page.items,
      nextCursor: page.hasMore && page.last ? encodeIncidentCursor(secret, binding, page.last) : null,
    };
  });
}

/**
 * GET /v1/incidents/{incidentId} (00-decisions §5): one incident of a live connection of this
 * workspace, in the mode the caller names. A bad `mode` is 400 `invalid_incident_query`; an
 * unknown, malformed or foreign id, or an incident of the other mode, is 404 `incident_not_found`.
 */
export async function readIncident(
  deps: Deps,
  principal: ApiKeyPrincipal,
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
