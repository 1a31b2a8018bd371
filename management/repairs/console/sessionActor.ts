// 02 "Browser session adapters use the same paths under /workspaces/{workspaceSlug} instead of /v1,
// require a current owner or admin, and allow only original-user completed-receipt reads for
// archived workspaces; pending reviews and mutations need an active workspace." The console's
// repair routes (issue 31) are such adapters of the CLI's reviewed-repair routes (03).

import type { ErrorCode } from '../../../shared/errors/index.js';
import type { SessionPrincipal } from '../../auth/principal.js';
import { activeWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import type { Deps } from '../../deps.js';
import { type ConsoleRepairActor, consoleOperationActor } from '../repairActor.js';

/**
 * What every console repair write answers before its service: an unknown workspace or a
 * non-member (404), a viewer (403), an archived workspace (409); and, from the in-transaction
 * recheck of runOperation, a membership, role or epoch that moved meanwhile.
 */
export const CONSOLE_REPAIR_WRITE_ERRORS = [
  'workspace_not_found',
  'forbidden',
  'workspace_unavailable',
] as const satisfies readonly ErrorCode[];

/** The signed-in owner or admin of an active workspace as the performer of a repair operation (client null). */
export async function consoleRepairActor(deps: Deps, session: SessionPrincipal, slug: string): Promise<ConsoleRepairActor> {
  return consoleOperationActor(await activeWorkspaceManager(deps.pool, session, slug));
}
