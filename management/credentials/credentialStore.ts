import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import { encryptSecret, newSecret, sha256Hex } from '../../shared/secrets.js';
import type { ConnectionRecord, CredentialStatus } from '../connections/connectionStore.js';

/** The connection fields that a credential state reads. */
export type CredentialConnection = Pick<ConnectionRecord, 'id' | 'environmentId' | 'mode' | 'revision' | 'credentialStatus'>;

/** 01 Credential state: never a token or hash. */
export interface CredentialState {
  connectionId: string;
  environmentId: string;
  mode: ConnectionRecord['mode'];
  revision: string;
  status: CredentialStatus;
  issuedAt: string | null;
  revokedAt: string | null;
}

/**
 * The credential state of a connection: `issuedAt` is the issue time of the current (or last)
 * credential, `revokedAt` the time it was revoked while the status is `revoked`.
 */
export async function readCredentialState(db: Queryable, connection: CredentialConnection): Promise<CredentialState> {
  // The epoch orders a connection's credentials even when the (test) clock moved backwards.
  const { rows } = await db.query<{ issued_at: Date; ended_at: Date | null; status: string }>(
    `SELECT issued_at, ended_at, status FROM credentials WHERE connection_id = $1
      ORDER BY epoch DESC, id DESC LIMIT 1`,
    [connection.id],
  );
  const last = rows[0];
  const revoked = connection.credentialStatus === 'revoked' && last?.status === 'revoked' && last.ended_at !== null;
  return {
    connectionId: connection.id,
    environmentId: connection.environmentId,
    mode: connection.mode,
    revision: connection.revision,
    status: connection.credentialStatus,
    issuedAt: connection.credentialStatus === 'not_issued' || !last ? null : last.issued_at.toISOString(),
    revokedAt: revoked ? last.ended_at!.toISOString() : null,
  };
}

/** The SHA-256 of the connection's active ingest token, or null when none is active. */
export async function findActiveTokenHash(db: Queryable, connectionId: string): Promise<string | null> {
  const { rows } = await db.query<{ token_hash: string }>(
    "SELECT token_hash FROM credentials WHERE connection_id = $1 AND status = 'active'",
    [connectionId],
  );
  return rows[0]?.token_hash ?? null;
}

/**
 * Records a credential change on the connection row: a new revision (01: the revision covers
 * credential changes), the next credential epoch and the new status. The caller holds the row lock.
 */
export async function recordCredentialChange(
  db: Queryable,
  input: { connectionId: string; revision: string; epoch: number; status: CredentialStatus },
): Promise<void> {
  await db.query('UPDATE connections SET revision = $2, credential_epoch = $3, credential_status = $4 WHERE id = $1', [
    input.connectionId,
    input.revision,
    input.epoch,
    input.status,
  ]);
}

/**
 * Issues a new active ingest token for a connection: the token is stored sealed (the HMAC key of
 * ingestion) and hashed (bearer comparison) per 00-decisions §4, and the connection's credential
 * epoch moves on. The caller holds the connection row lock and bumps the connection revision.
 * Returns the plaintext token, which exists only in this one response.
 */
export async function insertActiveCredential(
  db: Queryable,
  input: { connectionId: string; epoch: number; encryptionKey: Buffer; now: Date },
): Promise<{ credentialId: string; ingestToken: string }> {
  const credentialId = newId('cred_');
  const ingestToken = newSecret('svc_ing_');
  await db.query(
    `INSERT INTO credentials (id, connection_id, token_hash, token_sealed, epoch, status, issued_at)
     VALUES ($1, $2, $3, $4, $5, 'active', $6)`,
    [credentialId, input.connectionId, sha256Hex(ingestToken), encryptSecret(ingestToken, input.encryptionKey), input.epoch, input.now],
  );
  return { credentialId, ingestToken };
}

/** Ends the active credential of a connection (rotation or revocation). */
export async function endActiveCredential(
  db: Queryable,
  input: { connectionId: string; status: 'rotated' | 'revoked'; now: Date },
): Promise<void> {
  await db.query("UPDATE credentials SET status = $2, ended_at = $3 WHERE connection_id = $1 AND status = 'active'", [
    input.connectionId,
    input.status,
    input.now,
  ]);
}

/**
 * The workspace behind a console slug when the signed-in user may manage its credentials
 * (owner or admin), else null (01: missing workspace or insufficient permission is one 404).
 */
export async function findManagedWorkspaceBySlug(
  db: Queryable,
  slug: string,
  userId: string,
): Promise<{ id: string; model: 'canonical' | 'legacy' } | null> {
  const { rows } = await db.query<{ id: string; model: 'canonical' | 'legacy' }>(
    `SELECT w.id, w.model FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
      WHERE w.slug = $1 AND m.user_id = $2 AND m.role IN ('owner', 'admin')`,
    [slug, userId],
  );
  return rows[0] ?? null;
}
