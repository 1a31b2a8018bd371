import { AppError } from '../../../shared/errors/index.js';
import { hasIdForm } from '../../../shared/ids.js';
import type { SessionPrincipal } from '../../auth/principal.js';
import { requireWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import type { Deps } from '../../deps.js';
import { readOwnOperation } from '../../operations/idempotency.js';
import { REPAIR_ACTIONS } from '../../repairs/receipts.js';
import { consoleOperationActor } from '../../repairs/repairActor.js';
import { findDecisionPreview } from '../decisionStore.js';
import { readRepairOperation } from '../operationStatus.js';

/**
 * A repair operation read through the console, as the signed-in owner or admin who made it (a
 * viewer 403, a non-member 404). In an active workspace it is the CLI's read (a preview, an
 * expired preview or a retained receipt; 403 `authorization_changed` under another epoch or
 * role). In an archived workspace (02: only original-user completed-receipt reads): the user's
 * completed receipt, whatever the epoch (archiving moves it, which would otherwise make the rule
 * void); their pending or expired preview is 409 `workspace_unavailable`; anything else 404
 * `operation_not_found` first, so the answer reveals nothing of another actor's operation.
 */
export async function readConsoleRepairOperation(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  operationId: string,
): Promise<Record<string, unknown>> {
  const { actor: manager, status } = await requireWorkspaceManager(deps.pool, session, slug);
  const actor = consoleOperationActor(manager);
  if (status === 'active') return readRepairOperation(deps, actor, () => true, operationId);
  if (!hasIdForm(operationId, 'cliop_')) throw new AppError('operation_not_found');
  const preview = await findDecisionPreview(deps.pool, {
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    clientId: actor.clientId,
    operationId,
  });
  if (preview && preview.completedAt === null) throw new AppError('workspace_unavailable');
  const stored = await readOwnOperation(deps, actor, operationId, REPAIR_ACTIONS);
  return { ...stored.receipt, replayed: true };
}
