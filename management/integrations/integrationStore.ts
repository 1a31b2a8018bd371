import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import type { CredentialStatus, Direction, Mode, Protocol } from '../connections/connectionStore.js';
import type { ModeTopology } from '../environments/environmentStore.js';

export type ObservationState = 'waiting_for_observation' | 'observed' | 'incident_open';

/** 01 Connection slot, configured form. Never a credential or hash. */
export interface ConfiguredSlot {
  status: 'configured';
  mode: Mode;
  environmentId: string;
  connectionId: string;
  revision: string;
  credentialStatus: CredentialStatus;
  activeContractVersionId: string | null;
  latestObservationAt: string | null;
  openIncidentCount: number;
  observationState: ObservationState;
}

/** 01 Connection slot, missing form: exactly these three fields. */
export interface MissingSlot {
  status: 'not_configured';
  mode: Mode;
  environmentId: string;
}

/** 01 Integration (shared workflow). */
export interface CanonicalIntegration {
  id: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  createdAt: string;
  revision: string;
  connections: Record<Mode, ConfiguredSlot | MissingSlot>;
}

/** Inserts the shared workflow row (the caller holds the transaction). */
export async function insertIntegration(
  db: Queryable,
  input: { workspaceId: string; name: string; provider: string; direction: Direction; protocol: Protocol; revision: string; now: Date },
): Promise<{ id: string; integrationKey: string }> {
  const id = newId('wint_');
  const integrationKey = newId('svc_int_');
  await db.query(
    `INSERT INTO integrations (id, workspace_id, name, provider, direction, protocol, integration_key, revision, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, input.workspaceId, input.name, input.provider, input.direction, input.protocol, integrationKey, input.revision, input.now],
  );
  return { id, integrationKey };
}

interface IntegrationRow {
  id: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  created_at: Date;
  revision: string;
}

interface SlotRow {
  id: string;
  integration_id: string;
  environment_id: string;
  mode: Mode;
  revision: string;
  credential_status: CredentialStatus;
  active_contract_version_id: string | null;
  latest_observation_at: Date | null;
  open_incident_count: number;
}

/** 01 observationState: an open incident wins, then accepted traffic, else still waiting. */
export function observationStateOf(openIncidentCount: number, latestObservationAt: Date | null): ObservationState {
  if (openIncidentCount > 0) return 'incident_open';
  return latestObservationAt ? 'observed' : 'waiting_for_observation';
}

function configuredSlot(row: SlotRow): ConfiguredSlot {
  return {
    status: 'configured',
    mode: row.mode,
    environmentId: row.environment_id,
    connectionId: row.id,
    revision: row.revision,
    credentialStatus: row.credential_status,
    activeContractVersionId: row.active_contract_version_id,
    latestObservationAt: row.latest_observation_at ? row.latest_observation_at.toISOString() : null,
    openIncidentCount: row.open_incident_count,
    observationState: observationStateOf(row.open_incident_count, row.latest_observation_at),
  };
}

/** Builds canonical Integrations from their rows and their live connections, in row order. */
async function withSlots(db: Queryable, rows: IntegrationRow[], topology: ModeTopology): Promise<CanonicalIntegration[]> {
  if (rows.length === 0) return [];
  const slots = await db.query<SlotRow>(
    `SELECT id, integration_id, environment_id, mode, revision, credential_status, active_contract_version_id,
            latest_observation_at, open_incident_count
       FROM connections WHERE integration_id = ANY($1) AND deleted_at IS NULL`,
    [rows.map((row) => row.id)],
  );
  const byIntegration = new Map<string, Partial<Record<Mode, SlotRow>>>();
  for (const slot of slots.rows) {
    const entry = byIntegration.get(slot.integration_id) ?? {};
    entry[slot.mode] = slot;
    byIntegration.set(slot.integration_id, entry);
  }
  const slotOf = (integrationId: string, mode: Mode): ConfiguredSlot | MissingSlot => {
    const row = byIntegration.get(integrationId)?.[mode];
    return row ? configuredSlot(row) : { status: 'not_configured', mode, environmentId: topology[mode].id };
  };
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    provider: row.provider,
    direction: row.direction,
    protocol: row.protocol,
    createdAt: row.created_at.toISOString(),
    revision: row.revision,
    connections: { sandbox: slotOf(row.id, 'sandbox'), live: slotOf(row.id, 'live') },
  }));
}

const INTEGRATION_COLUMNS = 'id, name, provider, direction, protocol, created_at, revision';

/**
 * One page of the canonical inventory: live Integrations after `afterId` in shared-id order
 * (`wint_` ids are time-ordered; compared bytewise so the order never depends on a collation).
 * Reads `limit + 1` rows so the caller knows whether another page follows.
 */
export async function readCanonicalPage(
  db: Queryable,
  input: { workspaceId: string; afterId: string | null; limit: number; topology: ModeTopology },
): Promise<{ items: CanonicalIntegration[]; hasMore: boolean }> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT ${INTEGRATION_COLUMNS} FROM integrations
      WHERE workspace_id = $1 AND deleted_at IS NULL AND ($2::text IS NULL OR id COLLATE "C" > $2::text)
      ORDER BY id COLLATE "C" LIMIT $3`,
    [input.workspaceId, input.afterId, input.limit + 1],
  );
  const page = rows.slice(0, input.limit);
  return { items: await withSlots(db, page, input.topology), hasMore: rows.length > input.limit };
}

/** One live Integration of the workspace by exact `wint_` id, or null (foreign ids included). */
export async function readCanonicalIntegration(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
  topology: ModeTopology,
): Promise<CanonicalIntegration | null> {
  const { rows } = await db.query<IntegrationRow>(
    `SELECT ${INTEGRATION_COLUMNS} FROM integrations WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL`,
    [integrationId, workspaceId],
  );
  if (!rows[0]) return null;
  return (await withSlots(db, rows, topology))[0];
}

/** One item of the compatibility inventory: one live connection (decision: shape not shown by 01). */
export interface CompatibilityItem {
  id: string;
  workspaceIntegrationId: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  environmentId: string;
  mode: Mode;
  credentialStatus: CredentialStatus;
  activeContractVersionId: string | null;
}

interface CompatibilityRow {
  id: string;
  integration_id: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  environment_id: string;
  mode: Mode;
  credential_status: CredentialStatus;
  active_contract_version_id: string | null;
}

/**
 * One page of the compatibility inventory (Versioning 3): live connections after `afterId` in
 * connection-id order, optionally of one exact environment.
 */
export async function readCompatibilityPage(
  db: Queryable,
  input: { workspaceId: string; environmentId: string | null; afterId: string | null; limit: number },
): Promise<{ items: CompatibilityItem[]; hasMore: boolean }> {
  const { rows } = await db.query<CompatibilityRow>(
    `SELECT c.id, c.integration_id, i.name, i.provider, i.direction, i.protocol, c.environment_id, c.mode,
            c.credential_status, c.active_contract_version_id
       FROM connections c JOIN integrations i ON i.id = c.integration_id
      WHERE c.workspace_id = $1 AND c.deleted_at IS NULL AND i.deleted_at IS NULL
        AND ($2::text IS NULL OR c.environment_id = $2::text)
        AND ($3::text IS NULL OR c.id COLLATE "C" > $3::text)
      ORDER BY c.id COLLATE "C" LIMIT $4`,
    [input.workspaceId, input.environmentId, input.afterId, input.limit + 1],
  );
  return {
    items: rows.slice(0, input.limit).map((row) => ({
      id: row.id,
      workspaceIntegrationId: row.integration_id,
      name: row.name,
      provider: row.provider,
      direction: row.direction,
      protocol: row.protocol,
      environmentId: row.environment_id,
      mode: row.mode,
      credentialStatus: row.credential_status,
      activeContractVersionId: row.active_contract_version_id,
    })),
    hasMore: rows.length > input.limit,
  };
}
