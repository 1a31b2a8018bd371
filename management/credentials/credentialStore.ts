import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import { encryptSecret, newSecret, sha256Hex } from '../../shared/secrets.js';

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
export async function endActiveCredential(db: Queryable, input: { connectionId: string; status: 'rotated' | 'revoked'; now: Date }): Promise<void> {
  await db.query(
    "UPDATE credentials SET status = $2, ended_at = $3 WHERE connection_id = $1 AND status = 'active'",
    [input.connectionId, input.status, input.now],
  );
}
