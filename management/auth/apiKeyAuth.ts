import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { sha256Hex } from '../../shared/secrets.js';
import { cliScope } from './cliApi.js';
import type { ApiKeyPrincipal, CliWorkspacePrincipal, SetupWorkspacePrincipal, WorkspacePrincipal } from './principal.js';
import type { CliScopeSuffix, WorkspaceScope } from './scopes.js';

const API_KEY_PATTERN = /^svc_api_[A-Za-z0-9_-]{43}$/;

interface KeyRow {
  id: string;
  workspace_id: string;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  tenant_id: string;
  account_id: string;
  model: 'canonical' | 'legacy';
  status: 'active' | 'archived';
  auth_epoch: string;
}

const KEY_QUERY = `
  SELECT k.id, k.workspace_id, k.scopes, k.expires_at, k.revoked_at,
         w.tenant_id, w.account_id, w.model, w.status, w.auth_epoch
    FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
   WHERE `;

function keyIsCurrent(row: KeyRow, nowMs: number): boolean {
  return row.revoked_at === null && (row.expires_at === null || row.expires_at.getTime() > nowMs);
}

/**
 * Document 01 Authentication 1 and 7: `Authorization: Bearer svc_api_…`, hashed lookup, and a
 * current check of revocation, expiry and workspace archival on every request (all → 401).
 */
export async function authenticateApiKey(db: Queryable, header: string | undefined, nowMs: number): Promise<ApiKeyPrincipal> {
  const match = /^Bearer (\S+)$/.exec(header ?? '');
  if (!match || !API_KEY_PATTERN.test(match[1])) throw new AppError('unauthenticated');
  const { rows } = await db.query<KeyRow>(`${KEY_QUERY}k.key_hash = $1`, [sha256Hex(match[1])]);
  const row = rows[0];
  if (!row || !keyIsCurrent(row, nowMs) || row.status !== 'active') throw new AppError('unauthenticated');
  return {
    kind: 'api_key',
    keyId: row.id,
    workspaceId: row.workspace_id,
    tenantId: row.tenant_id,
    accountId: row.account_id,
    model: row.model,
    scopes: row.scopes as WorkspaceScope[],
    authEpoch: String(row.auth_epoch),
  };
}

export type AuthorityLoss = 'key' | 'workspace' | 'epoch';

/**
 * Re-reads the caller's authority inside a transaction (01 Credentials: authorization is checked
 * inside the transaction and again before commit). Returns what was lost, or null when the
 * authority seen at authentication still holds. An API key: the key (revoked, expired, scope
 * removed) and the workspace. A CLI token: its client (revoked), the user's membership and role
 * (removed, or now a viewer) and the workspace; a lost client or membership answers as a lost
 * key does.
 */
export async function recheckAuthority(
  db: Queryable,
  principal: WorkspacePrincipal,
  scope: WorkspaceScope | CliScopeSuffix,
  nowMs: number,
): Promise<AuthorityLoss | null> {
  if (principal.kind === 'cli') return recheckCliAuthority(db, principal, scope);
  if (principal.kind === 'setup') return recheckSetupAuthority(db, principal);
  const { rows } = await db.query<KeyRow>(`${KEY_QUERY}k.id = $1`, [principal.keyId]);
  const row = rows[0];
  if (!row || !keyIsCurrent(row, nowMs) || !row.scopes.includes(scope)) return 'key';
  if (row.status !== 'active') return 'workspace';
  if (String(row.auth_epoch) !== principal.authEpoch) return 'epoch';
  return null;
}

async function recheckCliAuthority(
  db: Queryable,
  principal: CliWorkspacePrincipal,
  scope: WorkspaceScope | CliScopeSuffix,
): Promise<AuthorityLoss | null> {
  const { rows } = await db.query<{ status: string; auth_epoch: string; role: string | null; client_current: boolean }>(
    `SELECT w.status, w.auth_epoch, m.role,
            EXISTS (SELECT 1 FROM cli_clients c
                     WHERE c.id = $3 AND c.user_id = $2 AND c.revoked_at IS NULL AND $4 = ANY (c.scopes)) AS client_current
       FROM workspaces w LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2
      WHERE w.id = $1`,
    [principal.workspaceId, principal.userId, principal.clientId, cliScope(scope)],
  );
  const row = rows[0];
  if (!row) return 'workspace';
  if (!row.client_current || row.role === null || row.role === 'viewer') return 'key';
  if (row.status !== 'active') return 'workspace';
  if (String(row.auth_epoch) !== principal.authEpoch) return 'epoch';
  return null;
}

/**
 * A setup grant (01 Authentication 4): its grant still unrevoked with the scope the route admitted
 * it with, its approver still an owner or admin, the workspace active, the epoch unmoved. The
 * bound connection's liveness is the route's business (a deletion ends it before COMMIT).
 */
async function recheckSetupAuthority(db: Queryable, principal: SetupWorkspacePrincipal): Promise<AuthorityLoss | null> {
  const { rows } = await db.query<{ status: string; auth_epoch: string; role: string | null; client_current: boolean }>(
    `SELECT w.status, w.auth_epoch, m.role,
            EXISTS (SELECT 1 FROM cli_clients c
                     WHERE c.id = $3 AND c.user_id = $2 AND c.workspace_id = $1 AND c.revoked_at IS NULL
                       AND $4 = ANY (c.scopes)) AS client_current
       FROM workspaces w LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2
      WHERE w.id = $1`,
    [principal.workspaceId, principal.userId, principal.clientId, principal.admittedScope],
  );
  const row = rows[0];
  if (!row) return 'workspace';
  if (!row.client_current || row.role === null || row.role === 'viewer') return 'key';
  if (row.status !== 'active') return 'workspace';
  if (String(row.auth_epoch) !== principal.authEpoch) return 'epoch';
  return null;
}

export function requireScope(principal: WorkspacePrincipal, scope: WorkspaceScope): void {
  if (!principal.scopes.includes(scope)) throw new AppError('insufficient_scope');
}

/** The authenticated caller of a route that declared `workspaceAuth` (workspaceAuth.ts). */
export function principalOf(request: FastifyRequest): WorkspacePrincipal {
  if (!request.apiKey) throw new Error('route is missing workspaceAuth');
  return request.apiKey;
}

/** The authenticated key of a route whose `workspaceAuth` refuses CLI tokens. */
export function apiKeyPrincipalOf(request: FastifyRequest): ApiKeyPrincipal {
  const principal = principalOf(request);
  if (principal.kind !== 'api_key') throw new Error('route accepts API keys only');
  return principal;
}
