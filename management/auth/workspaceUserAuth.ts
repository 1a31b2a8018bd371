import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { isWorkspaceSlug } from '../workspaces/rules.js';
import type { MemberRole } from '../workspaces/workspaceStore.js';
import type { SessionPrincipal, WorkspaceUserActor } from './principal.js';

/** A workspace as one signed-in member sees it, with what authority checks need. */
export interface WorkspaceManagement {
  actor: WorkspaceUserActor;
  status: 'active' | 'archived';
}

interface MemberRow {
  id: string;
  account_id: string;
  status: 'active' | 'archived';
  model: 'canonical' | 'legacy';
  auth_epoch: string;
  role: MemberRole;
}

/**
 * 02 Authentication 4: browser-session adapters need a current owner or admin of the workspace.
 * A missing workspace and a non-member are one 404 `workspace_not_found`; a viewer, who can see
 * the workspace, is 403 `forbidden` (03 Console-facing identifiers: role lacks permission).
 * Archived workspaces are returned: each route decides what it still allows there.
 */
export async function requireWorkspaceManager(db: Queryable, session: SessionPrincipal, slug: string): Promise<WorkspaceManagement> {
  // A value that cannot be a slug names no workspace (and may hold bytes PostgreSQL refuses).
  const { rows } = isWorkspaceSlug(slug)
    ? await db.query<MemberRow>(
        `SELECT w.id, w.account_id, w.status, w.model, w.auth_epoch, m.role
         FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
        WHERE w.slug = $1 AND m.user_id = $2`,
        [slug, session.userId],
      )
    : { rows: [] as MemberRow[] };
  const row = rows[0];
  if (!row) throw new AppError('workspace_not_found');
  if (row.role !== 'owner' && row.role !== 'admin') throw new AppError('forbidden');
  return {
    actor: {
      kind: 'workspace_user',
      userId: session.userId,
      sessionId: session.sessionId,
      workspaceId: row.id,
      accountId: row.account_id,
      role: row.role,
      model: row.model,
      authEpoch: String(row.auth_epoch),
    },
    status: row.status,
  };
}

/**
 * The signed-in owner or admin of an active workspace, for a preview or a mutation of a
 * browser-session adapter (02: pending reviews and mutations need an active workspace; archived:
 * 409 `workspace_unavailable`).
 */
export async function activeWorkspaceManager(db: Queryable, session: SessionPrincipal, slug: string): Promise<WorkspaceUserActor> {
  const { actor, status } = await requireWorkspaceManager(db, session, slug);
  if (status !== 'active') throw new AppError('workspace_unavailable');
  return actor;
}

/** What a workspace user lost since the actor was loaded. */
export type WorkspaceUserLoss = 'session' | 'role' | 'workspace' | 'epoch';

/**
 * Re-reads the session, the membership and the workspace inside an operation's transaction
 * (02 Authentication 3): the session must still be current, the user still an owner or admin,
 * the workspace still active and its authorization epoch unmoved. Null when all still hold.
 */
export async function recheckWorkspaceUser(db: Queryable, actor: WorkspaceUserActor, now: Date): Promise<WorkspaceUserLoss | null> {
  const { rows } = await db.query<{ status: string; auth_epoch: string; role: MemberRole | null; session_current: boolean }>(
    `SELECT w.status, w.auth_epoch, m.role,
            EXISTS (SELECT 1 FROM sessions s
                     WHERE s.id = $3 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $4) AS session_current
       FROM workspaces w LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2
      WHERE w.id = $1`,
    [actor.workspaceId, actor.userId, actor.sessionId, now],
  );
  const row = rows[0];
  if (!row?.session_current) return 'session';
  if (row.role !== 'owner' && row.role !== 'admin') return 'role';
  if (row.status !== 'active') return 'workspace';
  if (String(row.auth_epoch) !== actor.authEpoch) return 'epoch';
  return null;
}
