// SQL of configuration reviews (migrations/postgres/1732000005000_configuration_operations.sql and
// 1732000009000_session_reviews.sql) and of the Integration identity a review binds.

import type { Queryable } from '../../shared/db/pool.js';
import type { Direction, Protocol } from '../connections/connectionStore.js';
import type { StoredOperation } from '../operations/idempotency.js';
import type { CopiedArtifacts } from './artifacts.js';
import { reviewerMatches, reviewerParams, type Reviewer } from '../operations/actor.js';
import type { ReviewSnapshot } from './snapshot.js';

export type ConfigurationAction = 'configuration.copy' | 'configuration.compensate';

/** One stored review (02 "Operation review"), with what apply rechecks. */
export interface ReviewRecord {
  id: string;
  action: ConfigurationAction;
  workspaceId: string;
  /** The actor of the review (reviewer.ts): exactly one of `apiKeyId` and `userId` is set. */
  apiKeyId: string | null;
  userId: string | null;
  /** With `userId`, the CLI client the user acted through (user and client own the review). */
  cliClientId: string | null;
  authEpoch: string;
  integrationId: string;
  integrationRevision: string;
  destinationConnectionId: string;
  destinationRevision: string;
  destinationCredentialEpoch: number;
  sourceConnectionId: string | null;
  sourceRevision: string | null;
  originalOperationId: string | null;
  fingerprint: string;
  snapshot: ReviewSnapshot;
  copiedArtifacts: CopiedArtifacts | null;
  expiresAt: Date;
  createdAt: Date;
}

interface ReviewRow {
  id: string;
  action: ConfigurationAction;
  workspace_id: string;
  api_key_id: string | null;
  user_id: string | null;
  cli_client_id: string | null;
  auth_epoch: string;
  integration_id: string;
  integration_revision: string;
  destination_connection_id: string;
  destination_revision: string;
  destination_credential_epoch: string;
  source_connection_id: string | null;
  source_revision: string | null;
  original_operation_id: string | null;
  fingerprint: string;
  snapshot: ReviewSnapshot;
  copied_artifacts: CopiedArtifacts | null;
  expires_at: Date;
  created_at: Date;
}

const COLUMNS = `id, action, workspace_id, api_key_id, user_id, auth_epoch, integration_id, integration_revision,
  destination_connection_id, destination_revision, destination_credential_epoch, source_connection_id,
  source_revision, original_operation_id, fingerprint, snapshot, copied_artifacts, expires_at, created_at, cli_client_id`;

function toRecord(row: ReviewRow): ReviewRecord {
  return {
    id: row.id,
    action: row.action,
    workspaceId: row.workspace_id,
    apiKeyId: row.api_key_id,
    userId: row.user_id,
    cliClientId: row.cli_client_id,
    authEpoch: row.auth_epoch,
    integrationId: row.integration_id,
    integrationRevision: row.integration_revision,
    destinationConnectionId: row.destination_connection_id,
    destinationRevision: row.destination_revision,
    destinationCredentialEpoch: Number(row.destination_credential_epoch),
    sourceConnectionId: row.source_connection_id,
    sourceRevision: row.source_revision,
    originalOperationId: row.original_operation_id,
    fingerprint: row.fingerprint,
    snapshot: row.snapshot,
    copiedArtifacts: row.copied_artifacts,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

export async function insertReview(db: Queryable, review: ReviewRecord): Promise<void> {
  await db.query(
    `INSERT INTO configuration_reviews (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      review.id,
      review.action,
      review.workspaceId,
      review.apiKeyId,
      review.userId,
      review.authEpoch,
      review.integrationId,
      review.integrationRevision,
      review.destinationConnectionId,
      review.destinationRevision,
      review.destinationCredentialEpoch,
      review.sourceConnectionId,
      review.sourceRevision,
      review.originalOperationId,
      review.fingerprint,
      JSON.stringify(review.snapshot),
      review.copiedArtifacts === null ? null : JSON.stringify(review.copiedArtifacts),
      review.expiresAt,
      review.createdAt,
      review.cliClientId,
    ],
  );
}

/**
 * The review made by this key or user in this workspace, or null: another actor's review is
 * indistinguishable from none (02 Authentication 2). `forUpdate` serialises applies of one review.
 */
export async function findOwnReview(
  db: Queryable,
  workspaceId: string,
  reviewer: Reviewer,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ReviewRecord | null> {
  const { rows } = await db.query<ReviewRow>(
    `SELECT ${COLUMNS} FROM configuration_reviews
      WHERE id = $1 AND workspace_id = $2 AND ${reviewerMatches(3)}${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id, workspaceId, ...reviewerParams(reviewer)],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** The completed operation (receipt) of a review: same id in `operations`, or null while pending. */
export async function findCompletion(db: Queryable, workspaceId: string, id: string): Promise<StoredOperation | null> {
  const { rows } = await db.query<StoredOperation>(
    `SELECT id, kind, api_key_id, user_id, cli_client_id, request_fingerprint, connection_id, integration_id, recorded_revision, receipt, created_at
       FROM operations WHERE id = $1 AND workspace_id = $2`,
    [id, workspaceId],
  );
  return rows[0] ?? null;
}

/** The shared Integration as a review binds it (02 Review snapshot `identity`), deleted ones included. */
export interface IntegrationIdentityRow {
  id: string;
  revision: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  deleted: boolean;
}

export async function findIntegrationIdentity(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
): Promise<IntegrationIdentityRow | null> {
  const { rows } = await db.query<IntegrationIdentityRow>(
    `SELECT id, revision, name, provider, direction, protocol, deleted_at IS NOT NULL AS deleted
       FROM integrations WHERE id = $1 AND workspace_id = $2`,
    [integrationId, workspaceId],
  );
  return rows[0] ?? null;
}

/** The workspace's tenant id (a snapshot's `identity.tenantId`). */
export async function findWorkspaceTenantId(db: Queryable, workspaceId: string): Promise<string> {
  const { rows } = await db.query<{ tenant_id: string }>('SELECT tenant_id FROM workspaces WHERE id = $1', [workspaceId]);
  return rows[0].tenant_id;
}
