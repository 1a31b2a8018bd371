import { AppError } from '../../shared/errors/index.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import type { ConnectionRecord } from '../connections/connectionStore.js';
import { loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import type { AppDeps } from '../deps.js';
import {
  decodeObservationCursor,
  encodeObservationCursor,
  type ObservationCursorScope,
  type ObservationPosition,
} from './observationCursor.js';
import {
  EVENT_ID,
  parseEventType,
  parseLimit,
  parseOperationKey,
  parseStatusFilter,
  parseTimeRange,
  statusFilterKey,
} from './observationQuery.js';
import { findObservation, listObservationPositions, readObservationsAt, type ObservationFilter } from './observationStore.js';
import { observationDetailView, observationView, type ObservationDetailView, type ObservationView } from './observationViews.js';

/** The raw query of GET /v1/observations; values are strings (no coercion). */
export interface ObservationListQuery {
  integrationId?: string;
  limit?: string;
  cursor?: string;
  from?: string;
  to?: string;
  eventType?: string;
  operationKey?: string;
  status?: string;
}

/** The raw query of GET /v1/observations/{eventId}. */
export interface ObservationDetailQuery {
  integrationId?: string;
}

export interface ObservationListPage {
  items: ObservationView[];
  nextCursor: string | null;
}

/**
 * The exact connection an observation read names (03: "require the exact `integrationId` query
 * parameter ... no omitted connection can yield workspace-wide evidence"): absent → 400
 * `connection_required`; malformed, unknown, deleted or another workspace's → 404
 * `connection_not_found` (01: foreign ids answer 404).
 */
export function requireConnectionParam(integrationId: string | undefined): string {
  if (integrationId === undefined || integrationId === '') throw new AppError('connection_required');
  return integrationId;
}

export function loadReadableConnection(
  deps: AppDeps,
  principal: Pick<WorkspacePrincipal, 'workspaceId'>,
  connectionId: string,
): Promise<ConnectionRecord> {
  return loadWorkspaceConnection(deps.pool, principal.workspaceId, connectionId);
}

const HOUR_MS = 3_600_000;
/**
 * Receipt-time windows tried below the page's upper end, narrowest first, before reading back to
 * `from` (or the connection's first row): a busy connection fills a page from its last hour
 * without reading its history (the table has no read-in-order on 18.16, so a page reads every
 * row of its range before sorting).
 */
const PAGE_WINDOWS_MS = [HOUR_MS, 24 * HOUR_MS, 7 * 24 * HOUR_MS, 31 * 24 * HOUR_MS];

async function pagePositions(
  deps: AppDeps,
  filter: ObservationFilter,
  after: ObservationPosition | null,
  limit: number,
): Promise<ObservationPosition[]> {
  const top = after?.receivedAtMs ?? filter.toMs ?? deps.clock.nowMs();
  const bottom = filter.fromMs ?? 0;
  for (const window of PAGE_WINDOWS_MS) {
    if (top - window <= bottom) break;
    const found = await listObservationPositions(deps.clickhouse, filter, after, top - window, limit + 1);
    if (found.length > limit) return found;
  }
  return listObservationPositions(deps.clickhouse, filter, after, null, limit + 1);
}

/**
 * GET /v1/observations (00-decisions §5): one connection's observations, receipt time descending
 * then eventId descending, keyset-paged. Order of answers: unknown or repeated query member
 * (400 `invalid_evidence_query`, by the route schema), no connection named (400
 * `connection_required`), a bad limit, time, filter or range (400 `invalid_evidence_query`), a
 * connection that is not a live one of this workspace (404 `connection_not_found`), a cursor of
 * another list (400 `invalid_evidence_cursor`).
 */
export async function listObservations(
  deps: AppDeps,
  principal: WorkspacePrincipal,
  query: ObservationListQuery,
): Promise<ObservationListPage> {
  const connectionId = requireConnectionParam(query.integrationId);
  const limit = parseLimit(query.limit);
  const { fromMs, toMs } = parseTimeRange(query.from, query.to);
  const eventType = query.eventType === undefined ? null : parseEventType(query.eventType);
  const operationKey = query.operationKey === undefined ? null : parseOperationKey(query.operationKey);
  const status = query.status === undefined ? null : parseStatusFilter(query.status);
  const connection = await loadReadableConnection(deps, principal, connectionId);

  const scope: ObservationCursorScope = {
    workspaceId: principal.workspaceId,
    connectionId: connection.id,
    filters: [fromMs, toMs, eventType, operationKey, status === null ? null : statusFilterKey(status)],
  };
  const secret = deps.config.secretEncryptionKey;
  const after = query.cursor === undefined ? null : decodeObservationCursor(secret, query.cursor, scope);
  const filter: ObservationFilter = { connectionId: connection.id, fromMs, toMs, eventType, operationKey, status };
  const positions = await pagePositions(deps, filter, after, limit);
  const page = positions.slice(0, limit);
  const rows = await readObservationsAt(deps.clickhouse, connection.id, page);
  const last = page[page.length - 1];
  return {
    items: rows.map((row) => observationView(connection.id, row)),
    nextCursor: positions.length > limit && last ? encodeObservationCursor(secret, scope, last) : null,
  };
}

/**
 * GET /v1/observations/{eventId} (00-decisions §5): one observation of the named connection,
 * with its schemaShape. The connection is checked as for the list; an eventId that the envelope
 * schema could never admit, or that this connection never accepted, is 404
 * `observation_not_found`.
 */
export async function readObservation(
  deps: AppDeps,
  principal: WorkspacePrincipal,
  eventId: string,
  query: ObservationDetailQuery,
): Promise<ObservationDetailView> {
  const connectionId = requireConnectionParam(query.integrationId);
  const connection = await loadReadableConnection(deps, principal, connectionId);
  if (!EVENT_ID.test(eventId)) throw new AppError('observation_not_found');
  const row = await findObservation(deps.clickhouse, connection.id, eventId);
  if (!row) throw new AppError('observation_not_found');
  return observationDetailView(connection.id, row);
}
