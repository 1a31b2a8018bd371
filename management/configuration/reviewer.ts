// The actor of a copy, compensation or setup review: a workspace API key on `/v1`, or a console
// owner or admin on `/workspaces/{workspaceSlug}` (02 "Browser session adapters"). The one who
// previewed is the one who applies and recovers (02 Authentication 2), so a review names exactly
// one of them and is found only by it.

import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { recheckAuthority } from '../auth/apiKeyAuth.js';
import type { OperationActor } from '../auth/principal.js';
import { recheckWorkspaceUser } from '../auth/workspaceUserAuth.js';
import type { Deps } from '../deps.js';
import { findWorkspaceTenantId } from './configurationStore.js';

export { type Reviewer, reviewerOf } from '../operations/actor.js';
export { auditActorOf } from '../operations/audit.js';

/**
 * The authority check of a preview transaction (02 Authentication 3): a key revoked, expired or
 * without the scope is 403 `insufficient_scope`; a signed-out session 401 `unauthenticated`; a
 * user no longer owner or admin 403 `forbidden`; an archived workspace 409 `workspace_unavailable`.
 * A moved authorization epoch is left to apply: the review keeps the epoch it was made under.
 */
export async function recheckReviewer(db: Queryable, deps: Deps, actor: OperationActor): Promise<void> {
  const loss =
    actor.kind !== 'workspace_user'
      ? await recheckAuthority(db, actor, 'integrations:manage', deps.clock.nowMs())
      : await recheckWorkspaceUser(db, actor, deps.clock.now());
  if (loss === 'key') throw new AppError('insufficient_scope');
  if (loss === 'session') throw new AppError('unauthenticated');
  if (loss === 'role') throw new AppError('forbidden');
  if (loss === 'workspace') throw new AppError('workspace_unavailable');
}

/** The workspace's tenant id, which a snapshot's `identity` carries (a key already holds it). */
export async function tenantIdOf(db: Queryable, actor: OperationActor): Promise<string> {
  return actor.kind !== 'workspace_user' ? actor.tenantId : findWorkspaceTenantId(db, actor.workspaceId);
}
