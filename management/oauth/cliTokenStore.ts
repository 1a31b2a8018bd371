import type { Queryable } from '../../shared/db/pool.js';
import { newId } from '../../shared/ids.js';

export type CliTokenKind = 'access' | 'refresh';

/**
 * A new grant family of one approved device login: for the CLI, the CLI session of 03; for the
 * setup tool, a grant bound to one connection of one workspace.
 */
export async function insertCliClient(
  db: Queryable,
  input: {
    oauthClientId: string;
    userId: string;
    scopes: readonly string[];
    binding: { workspaceId: string; connectionId: string } | null;
    now: Date;
  },
): Promise<string> {
  const id = newId('clic_');
  await db.query(
    `INSERT INTO cli_clients (id, oauth_client_id, user_id, scopes, workspace_id, connection_id, created_at, last_used_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [
      id,
      input.oauthClientId,
      input.userId,
      input.scopes,
      input.binding?.workspaceId ?? null,
      input.binding?.connectionId ?? null,
      input.now,
    ],
  );
  return id;
}

/** Stores a token by its SHA-256 (the caller hashes; the token itself is never stored). */
export async function insertCliToken(
  db: Queryable,
  input: { tokenHash: string; clientId: string; kind: CliTokenKind; scopes: readonly string[]; now: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO cli_tokens (token_hash, client_id, kind, scopes, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [input.tokenHash, input.clientId, input.kind, input.scopes, input.now, input.expiresAt],
  );
}

/**
 * Deletes tokens that expired before `before`, at most 100 a call (each issue sweeps a few). A
 * spent refresh token is kept until then, so its reuse is recognised for as long as it could
 * have been used.
 */
export async function purgeCliTokens(db: Queryable, before: Date): Promise<void> {
  await db.query('DELETE FROM cli_tokens WHERE token_hash IN (SELECT token_hash FROM cli_tokens WHERE expires_at < $1 LIMIT 100)', [
    before,
  ]);
}

export interface RefreshTokenState {
  /** The public client the grant belongs to (rules.ts). */
  oauthClientId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  clientRevokedAt: Date | null;
  /** A setup grant's binding (null for the CLI). */
  workspaceId: string | null;
  connectionId: string | null;
}

/**
 * A refresh token with its client, both rows locked: two refreshes with one token, or a refresh
 * and a revocation of its client, are taken one after the other.
 */
export async function findRefreshTokenForUpdate(db: Queryable, tokenHash: string): Promise<RefreshTokenState | null> {
  const { rows } = await db.query<{
    oauth_client_id: string;
    client_id: string;
    user_id: string;
    scopes: string[];
    expires_at: Date;
    used_at: Date | null;
    revoked_at: Date | null;
    client_revoked_at: Date | null;
    workspace_id: string | null;
    connection_id: string | null;
  }>(
    `SELECT c.oauth_client_id, t.client_id, c.user_id, t.scopes, t.expires_at, t.used_at, t.revoked_at, c.revoked_at AS client_revoked_at,
            c.workspace_id, c.connection_id
       FROM cli_tokens t JOIN cli_clients c ON c.id = t.client_id
      WHERE t.token_hash = $1 AND t.kind = 'refresh'
      FOR UPDATE OF c, t`,
    [tokenHash],
  );
  const row = rows[0];
  return row
    ? {
        oauthClientId: row.oauth_client_id,
        clientId: row.client_id,
        userId: row.user_id,
        scopes: row.scopes,
        expiresAt: row.expires_at,
        usedAt: row.used_at,
        revokedAt: row.revoked_at,
        clientRevokedAt: row.client_revoked_at,
        workspaceId: row.workspace_id,
        connectionId: row.connection_id,
      }
    : null;
}

/** Marks a refresh token spent by its rotation. */
export async function spendRefreshToken(db: Queryable, tokenHash: string, now: Date): Promise<void> {
  await db.query('UPDATE cli_tokens SET used_at = $2 WHERE token_hash = $1', [tokenHash, now]);
}

/** The client was used now (a refresh or an authenticated request). */
export async function touchCliClient(db: Queryable, clientId: string, now: Date): Promise<void> {
  await db.query('UPDATE cli_clients SET last_used_at = $2 WHERE id = $1', [clientId, now]);
}

/**
 * Revokes a client and every token it holds, in one statement (so atomic even on the pool; both
 * updates run to completion whether or not the result reads them).
 * True when the client was revoked by this call, false when it already was or does not exist.
 */
export async function revokeClientAndTokens(db: Queryable, clientId: string, now: Date): Promise<boolean> {
  const { rows } = await db.query<{ revoked: boolean }>(
    `WITH client AS (
       UPDATE cli_clients SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id
     ), tokens AS (
       UPDATE cli_tokens SET revoked_at = $2 WHERE client_id = $1 AND revoked_at IS NULL RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM client) AS revoked`,
    [clientId, now],
  );
  return rows[0].revoked;
}

/** Revokes one access token of `oauthClientId`'s grants; nothing when it is unknown or already revoked. */
export async function revokeAccessToken(db: Queryable, oauthClientId: string, tokenHash: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE cli_tokens t SET revoked_at = $3 FROM cli_clients c
      WHERE t.token_hash = $2 AND t.kind = 'access' AND t.revoked_at IS NULL AND c.id = t.client_id AND c.oauth_client_id = $1`,
    [oauthClientId, tokenHash, now],
  );
}

/** The client and user of a refresh token of `oauthClientId`'s grants in any state; null when unknown. */
export async function findRefreshTokenClient(
  db: Queryable,
  oauthClientId: string,
  tokenHash: string,
): Promise<{ clientId: string; userId: string; workspaceId: string | null } | null> {
  const { rows } = await db.query<{ client_id: string; user_id: string; workspace_id: string | null }>(
    `SELECT t.client_id, c.user_id, c.workspace_id FROM cli_tokens t JOIN cli_clients c ON c.id = t.client_id
      WHERE t.token_hash = $2 AND t.kind = 'refresh' AND c.oauth_client_id = $1`,
    [oauthClientId, tokenHash],
  );
  return rows[0] ? { clientId: rows[0].client_id, userId: rows[0].user_id, workspaceId: rows[0].workspace_id } : null;
}

export interface AccessTokenGrant {
  clientId: string;
  userId: string;
  scopes: string[];
  /** A setup grant's binding (null for the CLI). */
  workspaceId: string | null;
  connectionId: string | null;
}

/**
 * The grant of an access token that is current at `now`: not expired, not revoked, its client not
 * revoked. A read only: `last_used_at` moves at each refresh, not on every request.
 */
export async function findCurrentAccessToken(
  db: Queryable,
  oauthClientId: string,
  tokenHash: string,
  now: Date,
): Promise<AccessTokenGrant | null> {
  const { rows } = await db.query<{
    client_id: string;
    user_id: string;
    scopes: string[];
    workspace_id: string | null;
    connection_id: string | null;
  }>(
    `SELECT t.client_id, c.user_id, t.scopes, c.workspace_id, c.connection_id
       FROM cli_tokens t JOIN cli_clients c ON c.id = t.client_id
      WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > $2 AND c.revoked_at IS NULL
        AND c.oauth_client_id = $3`,
    [tokenHash, now, oauthClientId],
  );
  const row = rows[0];
  return row
    ? { clientId: row.client_id, userId: row.user_id, scopes: row.scopes, workspaceId: row.workspace_id, connectionId: row.connection_id }
    : null;
}
