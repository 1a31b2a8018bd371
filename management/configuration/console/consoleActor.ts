// 02 "Browser session adapters use the same paths under /workspaces/{workspaceSlug} instead of /v1,
// require a current owner or admin, and allow only original-user completed-receipt reads for
// archived workspaces; pending reviews and mutations need an active workspace." Shared by the
// console routes of configuration copy and compensation and of second-mode setup.

import { AppError } from '../../../shared/errors/index.js';
import type { SessionPrincipal, WorkspaceUserActor } from '../../auth/principal.js';
import { requireWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import type { Deps } from '../../deps.js';

/**
 * A status read as the signed-in owner or admin: another actor's operation is 404 first (so the
 * answer reveals nothing of it), then in an archived workspace only a completed receipt is
 * answered; a pending or expired review there is 409 `workspace_unavailable`, as its apply would be.
 */
export async function readAsWorkspaceManager(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  read: (actor: WorkspaceUserActor) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const { actor, status } = await requireWorkspaceManager(deps.pool, session, slug);
  const answer = await read(actor);
  if (status !== 'active' && answer.status !== 'completed') throw new AppError('workspace_unavailable');
  return answer;
}
