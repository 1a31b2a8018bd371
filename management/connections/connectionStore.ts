import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import type { EnvironmentCategory } from '../workspaces/workspaceStore.js';

export type Mode = 'sandbox' | 'live';
export type CredentialStatus = 'not_issued' | 'active' | 'revoked';
export type Direction = 'inbound' | 'outbound';
export type Protocol = 'http-api' | 'http-webhook' | 'scheduled-feed' | 'queue';

/** A connection with the fields of its Integration and environment that reads and writes need. */
export interface ConnectionRecord {
  id: string;
  integrationId: string;
  workspaceId: string;
  environmentId: string;
  mode: Mode;
  connectionKey: string;
  revision: string;
  credentialStatus: CredentialStatus;
  credentialEpoch: number;
  activeContractVersionId: string | null;
  /** The connection's (or its Integration's) deletion time; only set with `includeDeleted`. */
  deletedAt: Date | null;
  environmentCategory: EnvironmentCategory;
  /** The environment's classified mode (01 Environment); equals `mode` for every stored connection. */
  environmentMode: Mode;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
}

interface ConnectionRow {
  id: string;
  integration_id: string;
  workspace_id: string;
  environment_id: string;
  mode: Mode;
  connection_key: string;
  revision: string;
  credential_status: CredentialStatus;
  credential_epoch: string;
  active_contract_version_id: string | null;
  deleted_at: Date | null;
  environment_category: EnvironmentCategory;
  environment_mode: Mode;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
}

const CONNECTION_COLUMNS = `
         c.id, c.integration_id, c.workspace_id, c.environment_id, c.mode, c.connection_key, c.revision,
         c.credential_status, c.credential_epoch, c.active_contract_version_id,
         COALESCE(c.deleted_at, i.deleted_at) AS deleted_at, e.category AS environment_category, e.mode AS environment_mode,
         i.name, i.provider, i.direction, i.protocol`;

const CONNECTION_BY_ID = `
    FROM connections c
    JOIN integrations i ON i.id = c.integration_id
    JOIN environments e ON e.id = c.environment_id
   WHERE c.id = $1 AND c.workspace_id = $2`;

const LIVE_ONLY = ' AND c.deleted_at IS NULL AND i.deleted_at IS NULL';

const FIND_CONNECTION = `SELECT ${CONNECTION_COLUMNS}${CONNECTION_BY_ID}`;

function recordOf(row: ConnectionRow): ConnectionRecord {
  return {
    id: row.id,
    integrationId: row.integration_id,
    workspaceId: row.workspace_id,
    environmentId: row.environment_id,
    mode: row.mode,
    connectionKey: row.connection_key,
    revision: row.revision,
    credentialStatus: row.credential_status,
    credentialEpoch: Number(row.credential_epoch),
    activeContractVersionId: row.active_contract_version_id,
    deletedAt: row.deleted_at,
    environmentCategory: row.environment_category,
    environmentMode: row.environment_mode,
    name: row.name,
    provider: row.provider,
    direction: row.direction,
    protocol: row.protocol,
  };
}

/**
 * The workspace's connection by exact `int_` id, or null. Another workspace's connection is
 * indistinguishable from a missing one (01: foreign ids answer 404). Deleted connections (or
 * connections of a deleted Integration) are null unless `includeDeleted` (receipt reads).
 * `forUpdate` takes the connection row lock that serialises configuration and credential changes.
 */
export async function findConnectionForWorkspace(
  db: Queryable,
  workspaceId: string,
  connectionId: string,
  options: { forUpdate?: boolean; includeDeleted?: boolean } = {},
): Promise<ConnectionRecord | null> {
  const live = options.includeDeleted ? '' : LIVE_ONLY;
  const lock = options.forUpdate ? ' FOR UPDATE OF c' : '';
  const { rows } = await db.query<ConnectionRow>(FIND_CONNECTION + live + lock, [connectionId, workspaceId]);
  return rows[0] ? recordOf(rows[0]) : null;
}

/**
 * The observation evidence the analyzer keeps on a connection row, exactly as the inventory's
 * connection slot reads it (01 Connection slot: `latestObservationAt`, `openIncidentCount`).
 */
export interface ConnectionEvidence {
  latestObservationAt: Date | null;
  openIncidentCount: number;
}

interface EvidenceRow extends ConnectionRow {
  latest_observation_at: Date | null;
  open_incident_count: number;
}

/**
 * The workspace's live connection with its observation evidence, read in one statement so the
 * single read and its evidence agree (GET /v1/connections/{connectionId}); null as
 * `findConnectionForWorkspace` answers null.
 */
export async function findConnectionWithEvidence(
  db: Queryable,
  workspaceId: string,
  connectionId: string,
): Promise<(ConnectionRecord & ConnectionEvidence) | null> {
  const { rows } = await db.query<EvidenceRow>(
    `SELECT ${CONNECTION_COLUMNS}, c.latest_observation_at, c.open_incident_count${CONNECTION_BY_ID}${LIVE_ONLY}`,
    [connectionId, workspaceId],
  );
  const row = rows[0];
  if (!row) return null;
  return { ...recordOf(row), latestObservationAt: row.latest_observation_at, openIncidentCount: row.open_incident_count };
}

/**
 * Inserts a connection in one mode slot of an Integration (the caller holds the transaction and
 * issues the credential). Returns its id and public connection key (00-decisions §4 prefixes).
 */
export async function insertConnection(
  db: Queryable,
  input: {
    integrationId: string;
    workspaceId: string;
    environmentId: string;
    mode: Mode;
    revision: string;
    credentialStatus: CredentialStatus;
    credentialEpoch: number;
    now: Date;
  },
): Promise<{ id: string; connectionKey: string }> {
  const id = newId('int_');
  const connectionKey = newId('svc_conn_v1.');
  await db.query(
    `INSERT INTO connections (id, integration_id, workspace_id, environment_id, mode, connection_key, revision,
                              credential_status, credential_epoch, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      input.integrationId,
      input.workspaceId,
      input.environmentId,
      input.mode,
      connectionKey,
      input.revision,
      input.credentialStatus,
      input.credentialEpoch,
      input.now,
    ],
  );
  return { id, connectionKey };
}
