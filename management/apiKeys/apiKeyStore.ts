import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';
import type { WorkspaceScope } from '../auth/scopes.js';

export interface CreatedApiKey {
  id: string;
  key: string;
  scopes: WorkspaceScope[];
  expiresAt: string | null;
}

/** Creates a workspace API key; the plaintext is returned once and only its SHA-256 is kept. */
export async function insertApiKey(
  db: Queryable,
  input: { workspaceId: string; scopes: WorkspaceScope[]; name?: string; expiresAt: Date | null; createdBy: string | null; now: Date },
): Promise<CreatedApiKey> {
  const id = newId('key_');
  const key = newSecret('svc_api_');
  await db.query(
    `INSERT INTO api_keys (id, workspace_id, name, key_hash, scopes, created_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, input.workspaceId, input.name ?? '', sha256Hex(key), input.scopes, input.createdBy, input.now, input.expiresAt],
  );
  return { id, key, scopes: input.scopes, expiresAt: input.expiresAt?.toISOString() ?? null };
}

/** Revokes a key of the workspace; false when no such unrevoked key exists. */
export async function revokeApiKey(db: Queryable, input: { id: string; workspaceId?: string; now: Date }): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL AND ($3::text IS NULL OR workspace_id = $3)',
    [input.id, input.now, input.workspaceId ?? null],
  );
  return (rowCount ?? 0) > 0;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  scopes: WorkspaceScope[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

/** Every key of a workspace, revoked and expired ones included, oldest first; never the hash. */
export async function listApiKeys(db: Queryable, workspaceId: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<{
    id: string;
    name: string;
    scopes: WorkspaceScope[];
    created_at: Date;
    expires_at: Date | null;
    revoked_at: Date | null;
  }>('SELECT id, name, scopes, created_at, expires_at, revoked_at FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id', [
    workspaceId,
  ]);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  }));
}

/** A key's workspace and revocation state, locked for a revocation; null when unknown. */
export async function findApiKeyForUpdate(db: Queryable, id: string): Promise<{ workspaceId: string; revokedAt: Date | null } | null> {
  const { rows } = await db.query<{ workspace_id: string; revoked_at: Date | null }>(
    'SELECT workspace_id, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE',
    [id],
  );
  return rows[0] ? { workspaceId: rows[0].workspace_id, revokedAt: rows[0].revoked_at } : null;
}
