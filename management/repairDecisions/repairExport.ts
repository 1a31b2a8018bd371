// 03 Reviewed repairs, export: an approved, validated repair as a bundle of files, kept in its
// receipt so a replay or a read returns the original result whatever changes later. Export does
// not edit the project, open a pull request or deploy (03 Reviewed repairs 4).

import { AppError } from '../../shared/errors/index.js';
import { newId } from '../../shared/ids.js';
import { buildRepairBundle, type RepairBundle } from '../../shared/repairs/export/bundle.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import type { RepairActor } from '../repairs/repairActor.js';
import { requirePathConnection } from '../connections/workspaceConnection.js';
import type { Deps } from '../deps.js';
import { runOperation, type OperationResponse } from '../operations/idempotency.js';
import { reserveRepairAdmission } from '../repairs/repairAdmission.js';
import { loadExportInput } from './exportInput.js';
import { loadPathProposal } from './pathProposal.js';
import { retainedReceipt, type CliReceipt } from '../repairs/receipts.js';

/** Where an export goes: files in the receipt, or a code-host pull request (not configured here). */
export type ExportTarget = 'files' | 'pull_request';

export interface RepairExportInput {
  connectionId: string;
  proposalId: string;
  target: ExportTarget;
  idempotencyKey: string;
}

/** 03 CLI operation receipt of `repair.export`: the bundle is its data. */
export type ExportReceipt = CliReceipt<RepairBundle>;

/**
 * POST …/repair-proposals/{proposalId}/export. A pull request needs a code host, which is not
 * configured (00-decisions §6): 503 `codehost_not_configured` once the connection and proposal
 * are found, nothing written. Files: under the one idempotency mechanism (a replay answers the
 * stored receipt), a repair admission (429, given back unless the export commits), the 404s, the
 * refusals of `loadExportInput`, then the bundle (which may refuse with
 * `repair_export_operation_unsupported` or `repair_export_sensitive_content`), committed with its
 * receipt and audit row.
 */
export async function exportRepair(deps: Deps, actor: RepairActor, input: RepairExportInput): Promise<OperationResponse> {
  requirePathConnection(input.connectionId);
  if (input.target === 'pull_request') {
    await loadPathProposal(deps.pool, actor.workspaceId, input.connectionId, input.proposalId);
    throw new AppError('codehost_not_configured');
  }
  return runOperation(
    deps,
    {
      kind: 'repair.export',
      principal: actor,
      scope: 'repairs:export',
      authEpoch: actor.authEpoch,
      idempotencyKey: input.idempotencyKey,
      request: { connectionId: input.connectionId, proposalId: input.proposalId, target: input.target },
      epochChangedCode: 'authorization_changed',
      replay: (stored) => retainedReceipt(stored, actor),
      reserve: () =>
        reserveRepairAdmission(deps, {
          workspaceId: actor.workspaceId,
          accountId: actor.accountId,
          userId: actor.userId,
          clientId: actor.clientId,
          action: 'export',
        }),
    },
    async (db) => {
      const { connection, proposal } = await loadPathProposal(db, actor.workspaceId, input.connectionId, input.proposalId);
      const bundle = buildRepairBundle(await loadExportInput(db, connection, proposal));
      const now = deps.clock.now();
      const receipt: ExportReceipt = {
        schemaVersion: CLI_SCHEMA_VERSION,
        operationId: newId('cliop_'),
        action: 'repair.export',
        targetId: proposal.id,
        connectionId: proposal.connectionId,
        status: 'completed',
        data: bundle,
        completedAt: now.toISOString(),
      };
      return {
        operationId: receipt.operationId,
        statusCode: 200,
        response: { ...receipt, replayed: false },
        receipt: receipt as unknown as Record<string, unknown>,
        connectionId: proposal.connectionId,
        audit: {
          action: 'repair.export',
          targetId: proposal.id,
          metadata: { connectionId: proposal.connectionId, filename: bundle.filename, fingerprint: bundle.fingerprint },
        },
      };
    },
  );
}
