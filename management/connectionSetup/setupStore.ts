import type { Queryable } from '../../shared/db/pool.js';
import type { Direction, Mode, Protocol } from '../connections/connectionStore.js';
import type { Reviewer } from '../configuration/reviewer.js';
import type { SetupSnapshot } from './setupSnapshot.js';

/** One stored review of a second-mode setup (02 "Second-mode setup"). */
export interface SetupReviewRecord {
  id: string;
  workspaceId: string;
  /** The actor of the review (configuration/reviewer.ts): exactly one of `apiKeyId` and `userId` is set. */
  apiKeyId: string | null;
  userId: string | null;
  /** The workspace authorization epoch the preview was made under. */
  authEpoch: string;
  integrationId: string;
  destinationMode: Mode;
  sourceConnectionId: string | null;
  contractVersionIds: string[];
  ruleIds: string[];
  snapshot: SetupSnapshot;
  fingerprint: string;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

interface SetupReviewRow {
  id: string;
  workspace_id: string;
  api_key_id: string | null;
  user_id: string | null;
  auth_epoch: string;
  integration_id: string;
  destination_mode: Mode;
  source_connection_id: string | null;
  contract_version_ids: string[];
  rule_ids: string[];
  snapshot: SetupSnapshot;
  fingerprint: string;
  expires_at: Date;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `id, workspace_id, api_key_id, user_id, auth_epoch, integration_id, destination_mode, source_connection_id,
  contract_version_ids, rule_ids, snapshot, fingerprint, expires_at, created_at, completed_at`;

const recordOf = (row: SetupReviewRow): SetupReviewRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  apiKeyId: row.api_key_id,
  userId: row.user_id,
  authEpoch: String(row.auth_epoch),
  integrationId: row.integration_id,
  destinationMode: row.destination_mode,
  sourceConnectionId: row.source_connection_id,
  contractVersionIds: row.contract_version_ids,
  ruleIds: row.rule_ids,
  snapshot: row.snapshot,
  fingerprint: row.fingerprint,
  expiresAt: row.expires_at,
  createdAt: row.created_at,
  completedAt: row.completed_at,
});

export async function insertSetupReview(db: Queryable, review: Omit<SetupReviewRecord, 'completedAt'>): Promise<void> {
  await db.query(
    `INSERT INTO connection_setups (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL)`,
    [
      review.id,
      review.workspaceId,
      review.apiKeyId,
      review.userId,
      review.authEpoch,
      review.integrationId,
      review.destinationMode,
      review.sourceConnectionId,
      review.contractVersionIds,
      review.ruleIds,
      JSON.stringify(review.snapshot),
      review.fingerprint,
      review.expiresAt,
      review.createdAt,
    ],
  );
}

/**
 * A review of the workspace made by this API key or console user, or null: another actor's review
 * is not found (02: the key of the preview is the key of apply and recovery; for a browser session,
 * the user). `forUpdate` serialises applies.
 */
export async function findSetupReview(
  db: Queryable,
  input: { workspaceId: string; reviewer: Reviewer; operationId: string },
  options: { forUpdate?: boolean } = {},
): Promise<SetupReviewRecord | null> {
  const { rows } = await db.query<SetupReviewRow>(
    `SELECT ${COLUMNS} FROM connection_setups
      WHERE id = $1 AND workspace_id = $2 AND api_key_id IS NOT DISTINCT FROM $3 AND user_id IS NOT DISTINCT FROM $4${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [input.operationId, input.workspaceId, input.reviewer.apiKeyId, input.reviewer.userId],
  );
  return rows[0] ? recordOf(rows[0]) : null;
}

export async function markSetupCompleted(db: Queryable, operationId: string, now: Date): Promise<void> {
  await db.query('UPDATE connection_setups SET completed_at = $2 WHERE id = $1', [operationId, now]);
}

/** The shared workflow fields a setup reviews and writes. */
export interface SetupIntegration {
  id: string;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
  integrationKey: string;
  revision: string;
}

/**
 * The workspace's live Integration by exact `wint_` id, or null. `forUpdate` takes the row lock
 * that serialises competing setups of one Integration.
 */
export async function findSetupIntegration(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<SetupIntegration | null> {
  const { rows } = await db.query<{
    id: string;
    name: string;
    provider: string;
    direction: Direction;
    protocol: Protocol;
    integration_key: string;
    revision: string;
  }>(
    `SELECT id, name, provider, direction, protocol, integration_key, revision FROM integrations
      WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [integrationId, workspaceId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    direction: row.direction,
    protocol: row.protocol,
    integrationKey: row.integration_key,
    revision: row.revision,
  };
}

/** The Integration gained a connection: its shared revision moves (a review of the old one is stale). */
export async function setIntegrationRevision(db: Queryable, integrationId: string, revision: string): Promise<void> {
  await db.query('UPDATE integrations SET revision = $2 WHERE id = $1', [integrationId, revision]);
}

/** The id of the Integration's live connection in a mode, or null when that slot is empty. */
export async function findSlotConnectionId(db: Queryable, integrationId: string, mode: Mode): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM connections WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL',
    [integrationId, mode],
  );
  return rows[0]?.id ?? null;
}
