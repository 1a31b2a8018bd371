// Who may preview, confirm and read a reviewed deletion: the one place that says it (issue 28
// item 5). A workspace API key with `integrations:manage`, or (03 "Reviewed repairs" rule 5)
// account CLI OAuth with the exact scope of the route (`service:cli:integrations:manage` plus
// `X-Service-Workspace`, management/auth/workspaceAuth.ts), or (01 Authentication 4, 03
// "Integration deletion") a setup OAuth token carrying `service:setup:integrations:delete`, bound
// to one connection: it may delete that connection's Integration, or that connection, and
// nothing else (403 `integration_scope_mismatch`, checked on the path's ids, which every deletion
// route but the receipt read carries for that reason). The receipt read needs no binding: only
// the previewing actor (user and setup grant together) finds its review.

import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { principalOf, recheckAuthority } from '../auth/apiKeyAuth.js';
import { requireSetupBinding, workspaceAuth } from '../auth/workspaceAuth.js';
import type { OperationActor } from '../auth/principal.js';
import type { WorkspaceScope } from '../auth/scopes.js';
import { recheckWorkspaceUser } from '../auth/workspaceUserAuth.js';
import type { Deps } from '../deps.js';

/** The workspace API key scope of every deletion route (01 Authentication 2 names no other that fits). */
export const DELETION_KEY_SCOPE = 'integrations:manage' satisfies WorkspaceScope;

/** The onRequest hook of every deletion route; it declares its requirement for the API reference. */
export function deletionAuth() {
  return workspaceAuth(DELETION_KEY_SCOPE, { cli: 'allow', setup: 'service:setup:integrations:delete' });
}

/** A setup token reaches only its bound Integration and connection (before the path's 404). */
export function requireDeletionBinding(request: FastifyRequest, target: { workspaceIntegrationId: string; connectionId?: string }): void {
  requireSetupBinding(principalOf(request), target);
}

/** The actor a deletion is performed and reviewed by: the one who previews confirms and reads it. */
export function deletionActorOf(request: FastifyRequest): OperationActor {
  return principalOf(request);
}

/**
 * The authority check inside a preview's transaction (as second-mode setup's): a key revoked,
 * expired or without the scope is 403 `insufficient_scope`, an archived workspace 409
 * `workspace_unavailable`. A moved authorization epoch is left to the confirmation, which
 * answers `deletion_preview_stale` (the review keeps the epoch it was made under). The
 * confirmation's own checks are `runOperation`'s, with `DELETION_KEY_SCOPE`.
 */
export async function recheckDeletionActor(db: Queryable, deps: Deps, actor: OperationActor): Promise<void> {
  const loss =
    actor.kind !== 'workspace_user'
      ? await recheckAuthority(db, actor, DELETION_KEY_SCOPE, deps.clock.nowMs())
      : await recheckWorkspaceUser(db, actor, deps.clock.now());
  if (loss === 'key') throw new AppError('insufficient_scope');
  if (loss === 'session') throw new AppError('unauthenticated');
  if (loss === 'role') throw new AppError('forbidden');
  if (loss === 'workspace') throw new AppError('workspace_unavailable');
}
