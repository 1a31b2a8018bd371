import { nextRevision } from '../../shared/db/revision.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import type { ContractCaller } from './contractConnection.js';
import type { Deps } from '../deps.js';
import { auditActorOf, recordAudit } from '../operations/audit.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import { loadContractConnection, recheckContractAuthority, requireVersionIdForm } from './contractConnection.js';
import {
  findVersion,
  insertActivation,
  markVersionActive,
  setActiveContract,
  supersedeVersion,
  type ActivationReason,
  type LifecycleStatus,
} from './contractStore.js';
import { enqueueReanalysis } from './reanalysis.js';

export interface ActivationInput {
  expectedActiveContractVersionId: string | null;
  reason: ActivationReason;
  expectedConnectionRevision?: string;
}

/** 01 "Activation result"; `connectionRevision` only when the request carried an expectation. */
export interface ActivationResult {
  activationId: string;
  activeContractVersionId: string;
  previousActiveContractVersionId: string | null;
  revision: number;
  connectionRevision?: string;
}

/**
 * 01 lifecycle table: `promote` activates a draft; `rollback` reactivates a superseded version.
 * Everything else (an already active target, promoting a superseded version, rolling back to a
 * draft) is an invalid move.
 */
const VALID_SOURCE: Record<ActivationReason, LifecycleStatus> = { promote: 'draft', rollback: 'superseded' };

/**
 * POST /v1/integrations/{integrationId}/contracts/{contractVersionId}/activate (01 Activate). In
 * one transaction under the connection row lock: the active-version precondition (409
 * `active_contract_changed` with the current id), the optional connection revision, the lifecycle
 * move; then the previous active version is superseded, the target activated, the connection takes
 * a new revision and the next analysis revision, and the activation row, the audit row and the
 * reanalysis job (outbox) commit together. Reanalysis availability is checked before (route hook).
 */
export async function activateContract(
  deps: Deps,
  principal: ContractCaller,
  integrationId: string,
  contractVersionId: string,
  input: ActivationInput,
): Promise<ActivationResult> {
  requireCanonicalWorkspace(principal);
  await loadContractConnection(deps.pool, principal, integrationId);
  requireVersionIdForm(contractVersionId);

  return withTransaction(deps.pool, async (db) => {
    const connection = await loadContractConnection(db, principal, integrationId, { forUpdate: true });
    const target = await findVersion(db, connection.id, contractVersionId, { forUpdate: true });
    if (!target) throw new AppError('contract_not_found');
    await recheckContractAuthority(db, principal, 'contracts:activate', deps.clock.nowMs());

    const previous = connection.activeContractVersionId;
    if (previous !== input.expectedActiveContractVersionId) {
      throw new AppError('active_contract_changed', { extra: { activeContractVersionId: previous } });
    }
    if (input.expectedConnectionRevision !== undefined && input.expectedConnectionRevision !== connection.revision) {
      throw new AppError('connection_configuration_changed');
    }
    if (target.lifecycleStatus !== VALID_SOURCE[input.reason]) throw new AppError('contract_not_activatable');

    const now = deps.clock.now();
    // The previous version leaves `active` first: at most one active version per connection.
    if (previous !== null) await supersedeVersion(db, previous, now);
    await markVersionActive(db, target.id, now);
    const connectionRevision = await nextRevision(db);
    const analysisRevision = await setActiveContract(db, connection.id, target.id, connectionRevision);
    const activationId = await insertActivation(db, {
      connectionId: connection.id,
      workspaceId: principal.workspaceId,
      contractVersionId: target.id,
      previousActiveContractVersionId: previous,
      reason: input.reason,
      analysisRevision,
      connectionRevision,
      apiKeyId: principal.kind === 'api_key' ? principal.keyId : null,
      now,
    });
    await enqueueReanalysis(
      db,
      {
        connectionId: connection.id,
        contractVersionId: target.id,
        previousActiveContractVersionId: previous,
        activationId,
        analysisRevision,
      },
      now,
    );
    await recordAudit(db, {
      workspaceId: principal.workspaceId,
      ...auditActorOf(principal),
      action: 'contract.activate',
      targetId: target.id,
      metadata: {
        connectionId: connection.id,
        activationId,
        reason: input.reason,
        previousActiveContractVersionId: previous,
        analysisRevision,
        connectionRevision,
      },
      at: now,
    });
    const result: ActivationResult = {
      activationId,
      activeContractVersionId: target.id,
      previousActiveContractVersionId: previous,
      revision: analysisRevision,
    };
    if (input.expectedConnectionRevision !== undefined) result.connectionRevision = connectionRevision;
    return result;
  });
}
