import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';

export interface UserRecord {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<(UserRecord & { passwordHash: string }) | null> {
  const { rows } = await db.query('SELECT id, email, name, password_hash, email_verified_at FROM users WHERE lower(email) = lower($1)', [
    email,
  ]);
  const row = rows[0];
  return row
    ? { id: row.id, email: row.email, name: row.name, emailVerified: row.email_verified_at !== null, passwordHash: row.password_hash }
    : null;
}

export async function insertUser(
  db: Queryable,
  input: { email: string; name: string; passwordHash: string; verified: boolean; now: Date },
): Promise<UserRecord> {
  const id = newId('usr_');
  await db.query('INSERT INTO users (id, email, name, password_hash, email_verified_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    id,
    input.email,
    input.name,
    input.passwordHash,
    input.verified ? input.now : null,
    input.now,
  ]);
  return { id, email: input.email, name: input.name, emailVerified: input.verified };
}

/** A console session; only the SHA-256 of its token is stored. Returns the token once. */
export async function createSession(
  db: Queryable,
  userId: string,
  now: Date,
  ttlSeconds: number,
): Promise<{ id: string; token: string; expiresAt: Date }> {
  const id = newId('sess_');
  const token = newSecret('svc_sess_');
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000);
  await db.query('INSERT INTO sessions (id, token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    id,
    sha256Hex(token),
    userId,
    now,
    expiresAt,
  ]);
  return { id, token, expiresAt };
}
