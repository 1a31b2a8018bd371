// GET /v1/cli/operations/{operationId} (03 Reviewed repairs): a decision preview (`previewed`, or
// `expired` past its expiry), or the retained receipt of a repair request, decision or export.

import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { RepairActor } from '../repairs/repairActor.js';
import type { CliScopeSuffix } from '../auth/scopes.js';
import type { Deps } from '../deps.js';
import { readOwnOperation } from '../operations/idempotency.js';
import { previewView } from './decisionPreview.js';
import { findDecisionPreview } from './decisionStore.js';
import { isSameAuthorization } from './previewAuthorization.js';
import { REPAIR_ACTIONS, SCOPE_OF_ACTION, retainedReceipt, type RepairAction } from '../repairs/receipts.js';

/**
 * In order: an operation of this user and client in this workspace (404 `operation_not_found`),
 * the scope of the action that made it (403 `insufficient_scope`: `repairs:approve` for a
 * preview), made under the authorization the caller holds now (403 `authorization_changed`). An
 * applied preview answers with its receipt, which has the same id.
 */
export async function readRepairOperation(
  deps: Deps,
  actor: RepairActor,
  hasScope: (scope: CliScopeSuffix) => boolean,
  operationId: string,
): Promise<Record<string, unknown>> {
  if (!hasIdForm(operationId, 'cliop_')) throw new AppError('operation_not_found');
  const preview = await findDecisionPreview(deps.pool, {
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    clientId: actor.clientId,
    operationId,
  });
  if (preview && preview.completedAt === null) {
    if (!hasScope(SCOPE_OF_ACTION['repair.decision'])) throw new AppError('insufficient_scope');
    if (!isSameAuthorization(preview, actor)) throw new AppError('authorization_changed');
    return { ...previewView(preview, deps.clock.nowMs()) };
  }
  const stored = await readOwnOperation(deps, actor, operationId, REPAIR_ACTIONS);
  if (!hasScope(SCOPE_OF_ACTION[stored.kind as RepairAction])) throw new AppError('insufficient_scope');
  return retainedReceipt(stored, actor);
}
