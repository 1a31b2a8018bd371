import type { Queryable } from '../../shared/db/pool.js';
import type { CredentialStatus, Direction, Mode, Protocol } from '../connections/connectionStore.js';
import { reviewerMatches, reviewerParams, type Reviewer } from '../operations/actor.js';
import type { DeletionAction, DeletionEvidence, DeletionSnapshot } from './deletionSnapshot.js';

/** One stored deletion review (03 "Integration deletion"). */
export interface DeletionReviewRecord {
  id: string;
  workspaceId: string;
  /** The actor of the review (configuration/reviewer.ts): exactly one of `apiKeyId` and `userId` is set. */
  apiKeyId: string | null;
  userId: string | null;
  /** With `userId`, the CLI client the user acted through (user and client own the review). */
  cliClientId: string | null;
  /** The workspace authorization epoch the preview was made under. */
  authEpoch: string;
  action: DeletionAction;
  integrationId: string;
  /** The connection of a `connection.delete`; null for a whole Integration. */
  connectionId: string | null;
  snapshot: DeletionSnapshot;
  evidence: DeletionEvidence[];
  fingerprint: string;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

interface DeletionReviewRow {
  id: string;
  workspace_id: string;
  api_key_id: string | null;
  user_id: string | null;
  cli_client_id: string | null;
  auth_epoch: string;
  action: DeletionAction;
  integration_id: string;
  connection_id: string | null;
  snapshot: DeletionSnapshot;
  evidence: DeletionEvidence[];
  fingerprint: string;
  expires_at: Date;
  created_at: Date;
  completed_at: Date | null;
}

const REVIEW_COLUMNS = `id, workspace_id, api_key_id, user_id, auth_epoch, action, integration_id, connection_id,
  snapshot, evidence, fingerprint, expires_at, created_at, completed_at, cli_client_id`;

const reviewOf = (row: DeletionReviewRow): DeletionReviewRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  apiKeyId: row.api_key_id,
  userId: row.user_id,
  cliClientId: row.cli_client_id,
  authEpoch: String(row.auth_epoch),
  action: row.action,
  integrationId: row.integration_id,
  connectionId: row.connection_id,
  snapshot: row.snapshot,
  evidence: row.evidence,
  fingerprint: row.fingerprint,
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  completedAt: row.completed_at,
});

export async function insertDeletionReview(db: Queryable, review: Omit<DeletionReviewRecord, 'completedAt'>): Promise<void> {
  await db.query(
    `INSERT INTO deletion_reviews (${REVIEW_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULL, $14)`,
    [
      review.id,
      review.workspaceId,
      review.apiKeyId,
      review.userId,
      review.authEpoch,
      review.action,
      review.integrationId,
      review.connectionId,
      JSON.stringify(review.snapshot),
      JSON.stringify(review.evidence),
      review.fingerprint,
      review.expiresAt,
      review.createdAt,
      review.cliClientId,
    ],
  );
}

/**
 * A review of the workspace made by this actor, or null: another actor's review is not found
 * (the one who previewed confirms and reads). `forUpdate` serialises confirmations of one review.
 */
export async function findDeletionReview(
  db: Queryable,
  input: { workspaceId: string; reviewer: Reviewer; operationId: string },
  options: { forUpdate?: boolean } = {},
): Promise<DeletionReviewRecord | null> {
  const { rows } = await db.query<DeletionReviewRow>(
    `SELECT ${REVIEW_COLUMNS} FROM deletion_reviews
      WHERE id = $1 AND workspace_id = $2 AND ${reviewerMatches(3)}${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [input.operationId, input.workspaceId, ...reviewerParams(input.reviewer)],
  );
  return rows[0] ? reviewOf(rows[0]) : null;
}

export async function markDeletionCompleted(db: Queryable, operationId: string, now: Date): Promise<void> {
  await db.query('UPDATE deletion_reviews SET completed_at = $2 WHERE id = $1', [operationId, now]);
}

/** The shared workflow fields a deletion reviews. */
export interface DeletionIntegration {
  id: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  revision: string;
}

/**
 * The workspace's live Integration by exact `wint_` id, or null (foreign, unknown and deleted
 * alike). `forUpdate` takes the row lock that orders a deletion before or after any setup or
 * other deletion of the Integration.
 */
export async function findLiveIntegration(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<DeletionIntegration | null> {
  const { rows } = await db.query<DeletionIntegration>(
    `SELECT id, name, provider, direction, protocol, revision FROM integrations
      WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [integrationId, workspaceId],
  );
  return rows[0] ?? null;
}

/** A live connection of the Integration with what a deletion reviews, shows and changes. */
export interface DeletionConnection {
  id: string;
  mode: Mode;
  environmentId: string;
  revision: string;
  credentialStatus: CredentialStatus;
  credentialEpoch: number;
  latestObservationAt: Date | null;
  openIncidentCount: number;
}

/**
 * The Integration's live connections in id order. `forUpdate` locks them in that order, the
 * order every writer of connections takes (configuration copy, the analyzer), after the
 * Integration row.
 */
export async function findLiveConnections(
  db: Queryable,
  integrationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<DeletionConnection[]> {
  const { rows } = await db.query<{
    id: string;
    mode: Mode;
    environment_id: string;
    revision: string;
    credential_status: CredentialStatus;
    credential_epoch: string;
    latest_observation_at: Date | null;
    open_incident_count: number;
  }>(
    `SELECT id, mode, environment_id, revision, credential_status, credential_epoch, latest_observation_at, open_incident_count
       FROM connections WHERE integration_id = $1 AND deleted_at IS NULL
      ORDER BY id${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [integrationId],
  );
  return rows.map((row) => ({
    id: row.id,
    mode: row.mode,
    environmentId: row.environment_id,
    revision: row.revision,
    credentialStatus: row.credential_status,
    credentialEpoch: Number(row.credential_epoch),
    latestObservationAt: row.latest_observation_at,
    openIncidentCount: row.open_incident_count,
  }));
}

/** How many contract versions and reconciliation rules each connection holds. */
export async function countConfiguration(
  db: Queryable,
  connectionIds: readonly string[],
): Promise<Map<string, { contractVersions: number; rules: number }>> {
  const { rows } = await db.query<{ id: string; contract_versions: number; rules: number }>(
    `SELECT c.id,
            (SELECT count(*)::int FROM contract_versions v WHERE v.connection_id = c.id) AS contract_versions,
            (SELECT count(*)::int FROM reconciliation_rules r WHERE r.connection_id = c.id) AS rules
       FROM unnest($1::text[]) AS c (id)`,
    [connectionIds],
  );
  return new Map(rows.map((row) => [row.id, { contractVersions: row.contract_versions, rules: row.rules }]));
}

/**
 * Deletes one locked connection: its active ingest token ends as `revoked`, the row takes the
 * deletion time, a new revision, the next credential epoch and `revoked` when a credential was
 * active (`not_issued` and `revoked` stay), and the open reconciliation deadlines of its rules go
 * (the analyzer no longer analyses a deleted connection, so they could never fire).
 */
export async function deleteConnection(
  db: Queryable,
  input: { connection: DeletionConnection; revision: string; now: Date },
): Promise<void> {
  const { connection } = input;
  if (connection.credentialStatus === 'active') {
    await db.query("UPDATE credentials SET status = 'revoked', ended_at = $2 WHERE connection_id = $1 AND status = 'active'", [
      connection.id,
      input.now,
    ]);
  }
  await db.query(
    `UPDATE connections
        SET deleted_at = $2, revision = $3, credential_epoch = credential_epoch + 1,
            credential_status = CASE WHEN credential_status = 'active' THEN 'revoked' ELSE credential_status END
      WHERE id = $1`,
    [connection.id, input.now, input.revision],
  );
  await db.query('DELETE FROM rule_deadlines WHERE connection_id = $1', [connection.id]);
}

/** The Integration lost a connection (a new revision) or is itself deleted (`deletedAt`). */
export async function updateIntegration(
  db: Queryable,
  input: { integrationId: string; revision: string; deletedAt: Date | null },
): Promise<void> {
  await db.query('UPDATE integrations SET revision = $2, deleted_at = COALESCE($3, deleted_at) WHERE id = $1', [
    input.integrationId,
    input.revision,
    input.deletedAt,
  ]);
}

/** The Integration's revision and whether it was deleted, deleted ones included (receipt reads). */
export async function findIntegrationState(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
): Promise<{ revision: string; deleted: boolean } | null> {
  const { rows } = await db.query<{ revision: string; deleted: boolean }>(
    'SELECT revision, deleted_at IS NOT NULL AS deleted FROM integrations WHERE id = $1 AND workspace_id = $2',
    [integrationId, workspaceId],
  );
  return rows[0] ?? null;
}
