import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { bumpCredentialEpoch } from '../../shared/redis.js';
import type { SessionPrincipal } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { canManageLifecycle } from './workspaceService.js';
import { findMembership, listConnectionIds, lockAccountWithinCap, setWorkspaceStatus } from './workspaceStore.js';

/**
 * The console "then activates the workspace" (01 POST /workspaces): sets the `active` flag. Owners
 * and admins may; viewers get 403 `forbidden`; non-members 404. An archived workspace cannot be
 * activated (409 `workspace_unavailable`). Activating an active workspace is a no-op 200.
 */
export async function activateWorkspace(deps: Deps, user: SessionPrincipal, slug: string): Promise<{ slug: string; active: true }> {
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    const membership = await findMembership(db, { slug, userId: user.userId, lock: true });
    if (!membership) throw new AppError('workspace_not_found');
    if (membership.role === 'viewer') throw new AppError('forbidden');
    if (membership.status !== 'active') throw new AppError('workspace_unavailable');
    if (!membership.active) {
      await db.query('UPDATE workspaces SET active = true WHERE id = $1', [membership.workspaceId]);
      await recordAudit(db, {
        workspaceId: membership.workspaceId,
        actorType: 'user',
        actorId: user.userId,
        action: 'workspace.activate',
        targetId: membership.workspaceId,
        at: now,
      });
    }
    return { slug: membership.slug, active: true };
  });
}

type LifecycleTarget = 'archived' | 'active';

/**
 * Archive and restore (01 Workspace state table, Authentication 6). Only a workspace owner who
 * also owns or administers its account sees the workspace here; anyone else gets 404. The change
 * moves `auth_epoch`, so admitted API-key operations of the workspace roll back, and moves the
 * Redis credential epoch of its connections so the ingest edge drops cached credentials. A
 * workspace already in the target state answers 200 without writing anything.
 */
async function changeStatus(
  deps: Deps,
  user: SessionPrincipal,
  slug: string,
  target: LifecycleTarget,
): Promise<{ slug: string; status: LifecycleTarget }> {
  const now = deps.clock.now();
  let connectionIds: string[] = [];
  let accountId = '';
  const result = await withTransaction(deps.pool, async (db) => {
    const membership = await findMembership(db, { slug, userId: user.userId, lock: true });
    if (!membership || !canManageLifecycle(membership)) throw new AppError('workspace_not_found');
    if (membership.status === target) return { slug: membership.slug, status: target };
    // Restore: the Developer cap and account status are checked under the account row lock.
    if (target === 'active') await lockAccountWithinCap(db, membership.accountId);
    await setWorkspaceStatus(db, { workspaceId: membership.workspaceId, status: target, now });
    await recordAudit(db, {
      workspaceId: membership.workspaceId,
      actorType: 'user',
      actorId: user.userId,
      action: target === 'archived' ? 'workspace.archive' : 'workspace.restore',
      targetId: membership.workspaceId,
      at: now,
    });
    accountId = membership.accountId;
    connectionIds = await listConnectionIds(db, membership.workspaceId);
    for (const id of connectionIds) await bumpCredentialEpoch(deps.redis, accountId, id);
    return { slug: membership.slug, status: target };
  });
  // Again after COMMIT, so a credential reload that raced the commit is dropped too.
  for (const id of connectionIds) await bumpCredentialEpoch(deps.redis, accountId, id).catch(() => undefined);
  return result;
}

export const archiveWorkspace = (deps: Deps, user: SessionPrincipal, slug: string) => changeStatus(deps, user, slug, 'archived');
export const restoreWorkspace = (deps: Deps, user: SessionPrincipal, slug: string) => changeStatus(deps, user, slug, 'active');
