import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import { readDefinitions } from '../../shared/contracts/definitionStore.js';
import { splitDefinitions, withDefinitions } from '../../shared/contracts/definitions.js';
import type { ImportedOperation, SkippedPayload, UncheckedSubschema } from '../../shared/contracts/index.js';
import type { Direction, Protocol } from '../connections/connectionStore.js';

export type ContractFormat = 'openapi' | 'json-schema';
export type LifecycleStatus = 'draft' | 'active' | 'superseded';
export type ActivationReason = 'promote' | 'rollback';

/** The unique constraint of 01 Versioning 2: `declaredVersion` is unique per integration. */
export const DECLARED_VERSION_CONSTRAINT = 'contract_versions_declared_version_key';

/** A stored contract version without its document and operations. */
export interface ContractVersionRecord {
  id: string;
  connectionId: string;
  declaredVersion: string;
  format: ContractFormat;
  importedFrom: string;
  fingerprint: string;
  operationCount: number;
  contentSignature: string;
  skipped: SkippedPayload[];
  lifecycleStatus: LifecycleStatus;
  registeredFromRevision: string;
  connectionRevision: string;
  createdAt: Date;
  activatedAt: Date | null;
  supersededAt: Date | null;
}

export interface ContractOperationRecord {
  id: string;
  contractVersionId: string;
  operationKey: string;
  direction: Direction;
  protocol: Protocol;
  method: string;
  routeTemplate: string;
  /** Issue 26: the servers' path prefixes (ImportedOperation.basePaths). */
  basePaths: string[];
  eventType: string | null;
  payloadLocation: string;
  statusSelector: string;
  fingerprint: string;
  schema: Record<string, unknown>;
  unchecked: UncheckedSubschema[];
}

interface VersionRow {
  id: string;
  connection_id: string;
  declared_version: string;
  format: ContractFormat;
  imported_from: string;
  fingerprint: string;
  operation_count: number;
  content_signature: string;
  skipped: SkippedPayload[];
  lifecycle_status: LifecycleStatus;
  registered_from_revision: string;
  connection_revision: string;
  created_at: Date;
  activated_at: Date | null;
  superseded_at: Date | null;
}

interface OperationRow {
  id: string;
  contract_version_id: string;
  operation_key: string;
  direction: Direction;
  protocol: Protocol;
  method: string;
  route_template: string;
  base_paths: string[];
  event_type: string | null;
  payload_location: string;
  status_selector: string;
  fingerprint: string;
  schema: Record<string, unknown>;
  unchecked: UncheckedSubschema[];
}

const VERSION_COLUMNS = `id, connection_id, declared_version, format, imported_from, fingerprint, operation_count,
  content_signature, skipped, lifecycle_status, registered_from_revision, connection_revision, created_at,
  activated_at, superseded_at`;

function toVersion(row: VersionRow): ContractVersionRecord {
  return {
    id: row.id,
    connectionId: row.connection_id,
    declaredVersion: row.declared_version,
    format: row.format,
    importedFrom: row.imported_from,
    fingerprint: row.fingerprint,
    operationCount: row.operation_count,
    contentSignature: row.content_signature,
    skipped: row.skipped,
    lifecycleStatus: row.lifecycle_status,
    registeredFromRevision: row.registered_from_revision,
    connectionRevision: row.connection_revision,
    createdAt: row.created_at,
    activatedAt: row.activated_at,
    supersededAt: row.superseded_at,
  };
}

function toOperation(row: OperationRow): ContractOperationRecord {
  return {
    id: row.id,
    contractVersionId: row.contract_version_id,
    operationKey: row.operation_key,
    direction: row.direction,
    protocol: row.protocol,
    method: row.method,
    routeTemplate: row.route_template,
    basePaths: row.base_paths,
    eventType: row.event_type,
    payloadLocation: row.payload_location,
    statusSelector: row.status_selector,
    fingerprint: row.fingerprint,
    schema: row.schema,
    unchecked: row.unchecked,
  };
}

/** The connection's version with this declared label, or null. */
export async function findVersionByDeclaredVersion(
  db: Queryable,
  connectionId: string,
  declaredVersion: string,
): Promise<ContractVersionRecord | null> {
  const { rows } = await db.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM contract_versions WHERE connection_id = $1 AND declared_version = $2`,
    [connectionId, declaredVersion],
  );
  return rows[0] ? toVersion(rows[0]) : null;
}

/** The connection's version by id, or null: another connection's version is indistinguishable from none. */
export async function findVersion(
  db: Queryable,
  connectionId: string,
  versionId: string,
  options: { forUpdate?: boolean } = {},
): Promise<ContractVersionRecord | null> {
  const { rows } = await db.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM contract_versions WHERE id = $1 AND connection_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [versionId, connectionId],
  );
  return rows[0] ? toVersion(rows[0]) : null;
}

/**
 * One page of a connection's versions, `createdAt` descending then `id` descending (01 list
 * order), starting after `after`; reads `limit + 1` rows so the caller knows whether more follow.
 */
export async function listVersions(
  db: Queryable,
  connectionId: string,
  after: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<ContractVersionRecord[]> {
  const { rows } = await db.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM contract_versions
      WHERE connection_id = $1
        AND ($2::timestamptz IS NULL OR created_at < $2 OR (created_at = $2 AND id COLLATE "C" < $3::text COLLATE "C"))
      ORDER BY created_at DESC, id COLLATE "C" DESC
      LIMIT $4`,
    [connectionId, after?.createdAt ?? null, after?.id ?? null, limit + 1],
  );
  return rows.map(toVersion);
}

/** The operations of the given versions, in import order, grouped by version id; each schema self-contained. */
export async function readOperations(db: Queryable, versionIds: readonly string[]): Promise<Map<string, ContractOperationRecord[]>> {
  const grouped = new Map<string, ContractOperationRecord[]>(versionIds.map((id) => [id, []]));
  if (versionIds.length === 0) return grouped;
  const definitions = await readDefinitions(db, versionIds);
  const { rows } = await db.query<OperationRow>(
    `SELECT id, contract_version_id, operation_key, direction, protocol, method, route_template, base_paths, event_type,
            payload_location, status_selector, fingerprint, schema, unchecked
       FROM contract_operations WHERE contract_version_id = ANY($1::text[])
      ORDER BY contract_version_id, position`,
    [versionIds],
  );
  for (const row of rows) {
    const operation = toOperation(row);
    operation.schema = withDefinitions(operation.schema, definitions.get(row.contract_version_id) ?? {});
    grouped.get(row.contract_version_id)?.push(operation);
  }
  return grouped;
}

export interface NewContractVersion {
  connectionId: string;
  workspaceId: string;
  declaredVersion: string;
  format: ContractFormat;
  importedFrom: string;
  fingerprint: string;
  document: unknown;
  contentSignature: string;
  skipped: SkippedPayload[];
  operations: ImportedOperation[];
  direction: Direction;
  protocol: Protocol;
  registeredFromRevision: string;
  connectionRevision: string;
  /** Null for a draft a console user's configuration copy or setup created. */
  apiKeyId: string | null;
  now: Date;
}

/**
 * Inserts a draft version and its operations, the definitions they share once on the version
 * (the caller holds the transaction and the connection lock).
 */
export async function insertDraftVersion(db: Queryable, input: NewContractVersion): Promise<ContractVersionRecord> {
  const id = newId('cv_');
  const ops = input.operations;
  const stored = splitDefinitions(ops.map((op) => op.schema));
  const { rows } = await db.query<VersionRow>(
    `INSERT INTO contract_versions (id, connection_id, workspace_id, declared_version, format, imported_from, fingerprint,
                                    document, operation_count, content_signature, skipped, lifecycle_status,
                                    registered_from_revision, connection_revision, api_key_id, created_at, definitions)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'draft', $12, $13, $14, $15, $16)
     RETURNING ${VERSION_COLUMNS}`,
    [
      id,
      input.connectionId,
      input.workspaceId,
      input.declaredVersion,
      input.format,
      input.importedFrom,
      input.fingerprint,
      JSON.stringify(input.document),
      ops.length,
      input.contentSignature,
      JSON.stringify(input.skipped),
      input.registeredFromRevision,
      input.connectionRevision,
      input.apiKeyId,
      input.now,
      JSON.stringify(stored.definitions),
    ],
  );
  // One statement for any number of operations: parallel arrays, one row per position.
  await db.query(
    `INSERT INTO contract_operations (id, contract_version_id, operation_key, direction, protocol, method, route_template,
                                      base_paths, event_type, payload_location, status_selector, fingerprint, schema, unchecked, position)
     SELECT o.id, $1, o.operation_key, $2, $3, o.method, o.route_template,
            ARRAY(SELECT jsonb_array_elements_text(o.base_paths)), o.event_type, o.payload_location,
            o.status_selector, o.fingerprint, o.schema, o.unchecked, o.position
       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[], $9::text[], $10::text[], $11::text[], $12::text[], $13::jsonb[], $14::jsonb[], $15::int[])
         AS o (id, operation_key, method, route_template, base_paths, event_type, payload_location, status_selector, fingerprint, schema, unchecked, position)`,
    [
      id,
      input.direction,
      input.protocol,
      ops.map(() => newId('cop_')),
      ops.map((op) => op.operationKey),
      ops.map((op) => op.method),
      ops.map((op) => op.routeTemplate),
      // unnest cannot take a two-dimensional array of uneven rows: each list travels as JSON.
      ops.map((op) => JSON.stringify(op.basePaths)),
      ops.map((op) => op.eventType),
      ops.map((op) => op.payloadLocation),
      ops.map((op) => op.statusSelector),
      ops.map((op) => op.fingerprint),
      stored.schemas.map((schema) => JSON.stringify(schema)),
      ops.map((op) => JSON.stringify(op.unchecked)),
      ops.map((_, position) => position),
    ],
  );
  return toVersion(rows[0]);
}

/** Moves a version to `superseded` (it was the connection's active version). */
export async function supersedeVersion(db: Queryable, versionId: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE contract_versions SET lifecycle_status = 'superseded', superseded_at = $2 WHERE id = $1 AND lifecycle_status = 'active'`,
    [versionId, now],
  );
}

/**
 * Moves a draft or superseded version to `active`. `activatedAt` and `supersededAt` describe the
 * latest transition (a reactivated version is no longer superseded); the full history is in
 * `contract_activations`.
 */
export async function markVersionActive(db: Queryable, versionId: string, now: Date): Promise<ContractVersionRecord> {
  const { rows } = await db.query<VersionRow>(
    `UPDATE contract_versions SET lifecycle_status = 'active', activated_at = $2, superseded_at = NULL
      WHERE id = $1 RETURNING ${VERSION_COLUMNS}`,
    [versionId, now],
  );
  return toVersion(rows[0]);
}

/** A registration is a configuration change: the connection takes a new revision. */
export async function setConnectionRevision(db: Queryable, connectionId: string, revision: string): Promise<void> {
  await db.query('UPDATE connections SET revision = $2 WHERE id = $1', [connectionId, revision]);
}

/**
 * Points the connection at its new active version with a new connection revision and the next
 * analysis revision (01 Activation result `revision`); returns that analysis revision.
 */
export async function setActiveContract(db: Queryable, connectionId: string, versionId: string, revision: string): Promise<number> {
  const { rows } = await db.query<{ analysis_revision: number }>(
    `UPDATE connections SET active_contract_version_id = $2, revision = $3, analysis_revision = analysis_revision + 1
      WHERE id = $1 RETURNING analysis_revision`,
    [connectionId, versionId, revision],
  );
  return rows[0].analysis_revision;
}

export interface NewActivation {
  connectionId: string;
  workspaceId: string;
  contractVersionId: string;
  previousActiveContractVersionId: string | null;
  reason: ActivationReason;
  analysisRevision: number;
  connectionRevision: string;
  /** The API key that activated; null when a user did (through the CLI: the audit row names them). */
  apiKeyId: string | null;
  now: Date;
}

/** Records one activation (the history of the active pointer); returns its `act_` id. */
export async function insertActivation(db: Queryable, input: NewActivation): Promise<string> {
  const id = newId('act_');
  await db.query(
    `INSERT INTO contract_activations (id, connection_id, workspace_id, contract_version_id, previous_active_contract_version_id,
                                       reason, analysis_revision, connection_revision, api_key_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      input.connectionId,
      input.workspaceId,
      input.contractVersionId,
      input.previousActiveContractVersionId,
      input.reason,
      input.analysisRevision,
      input.connectionRevision,
      input.apiKeyId,
      input.now,
    ],
  );
  return id;
}
