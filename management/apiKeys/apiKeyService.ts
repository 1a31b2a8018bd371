import type { Queryable } from '../../shared/db/pool.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { SessionPrincipal } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { findMembership, type MembershipRecord } from '../workspaces/workspaceStore.js';
import { findApiKeyForUpdate, insertApiKey, listApiKeys, revokeApiKey, type ApiKeyRecord } from './apiKeyStore.js';
import { validApiKeyName, validLifetime, validScopes } from './rules.js';

/**
 * Key management needs an owner or admin of an active workspace (00-decisions §3). Non-members,
 * missing and archived workspaces are 404 `workspace_not_found`; a viewer, who can see the
 * workspace, is 403 `forbidden` (03 Console-facing identifiers: role lacks permission).
 */
async function managedWorkspace(db: Queryable, user: SessionPrincipal, slug: string, lock = false): Promise<MembershipRecord> {
  const membership = await findMembership(db, { slug, userId: user.userId, lock });
  if (membership?.status !== 'active') throw new AppError('workspace_not_found');
  if (membership.role === 'viewer') throw new AppError('forbidden');
  return membership;
}

export async function listWorkspaceApiKeys(deps: Deps, user: SessionPrincipal, slug: string): Promise<ApiKeyRecord[]> {
  const workspace = await managedWorkspace(deps.pool, user, slug);
  return listApiKeys(deps.pool, workspace.workspaceId);
}

export interface CreateApiKeyInput {
  name?: string;
  scopes: string[];
  expiresInSeconds?: number;
}

export interface CreatedApiKeyView {
  id: string;
  name: string;
  key: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
}

/** Creates a key; its plaintext is in this response only, its SHA-256 alone is stored. */
export async function createWorkspaceApiKey(
  deps: Deps,
  user: SessionPrincipal,
  slug: string,
  input: CreateApiKeyInput,
): Promise<CreatedApiKeyView> {
  const name = validApiKeyName(input.name);
  const scopes = validScopes(input.scopes);
  const lifetime = validLifetime(input.expiresInSeconds);
  const now = deps.clock.now();
  const expiresAt = lifetime === null ? null : new Date(now.getTime() + lifetime * 1000);
  return withTransaction(deps.pool, async (db) => {
    // The workspace row lock orders this creation with a concurrent archive.
    const workspace = await managedWorkspace(db, user, slug, true);
    const created = await insertApiKey(db, { workspaceId: workspace.workspaceId, name, scopes, expiresAt, createdBy: user.userId, now });
    await recordAudit(db, {
      workspaceId: workspace.workspaceId,
      actorType: 'user',
      actorId: user.userId,
      action: 'api_key.create',
      targetId: created.id,
      metadata: { name, scopes, expiresAt: created.expiresAt },
      at: now,
    });
    return { id: created.id, name, key: created.key, scopes, createdAt: now.toISOString(), expiresAt: created.expiresAt };
  });
}

/**
 * Revokes a key of the workspace; the next request with it fails authentication (keys are
 * current-checked per request). Revoking a revoked key answers the same 200 and writes nothing.
 */
export async function revokeWorkspaceApiKey(deps: Deps, user: SessionPrincipal, slug: string, keyId: string): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.pool, async (db) => {
    const workspace = await managedWorkspace(db, user, slug);
    const key = hasIdForm(keyId, 'key_') ? await findApiKeyForUpdate(db, keyId) : null;
    if (!key || key.workspaceId !== workspace.workspaceId) throw new AppError('api_key_not_found');
    if (key.revokedAt !== null) return;
    await revokeApiKey(db, { id: keyId, workspaceId: workspace.workspaceId, now });
    await recordAudit(db, {
      workspaceId: workspace.workspaceId,
      actorType: 'user',
      actorId: user.userId,
      action: 'api_key.revoke',
      targetId: keyId,
      at: now,
    });
  });
}
