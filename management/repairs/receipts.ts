// 03 "CLI operation receipt": what a repair request, decision or export leaves behind, retained
// for replays and operation reads.

import { AppError } from '../../shared/errors/index.js';
import type { CliScopeSuffix } from '../auth/scopes.js';
import type { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import type { StoredOperation } from '../operations/idempotency.js';
import type { RepairActor } from './repairActor.js';

/** The receipt actions of 03 (their `operations.kind`). */
export const REPAIR_ACTIONS = ['repair.request', 'repair.decision', 'repair.export'] as const;
export type RepairAction = (typeof REPAIR_ACTIONS)[number];

/** 03 Endpoints: an operation is read with the scope of the action that made it. */
export const SCOPE_OF_ACTION: Record<RepairAction, CliScopeSuffix> = {
  'repair.request': 'repairs:create',
  'repair.decision': 'repairs:approve',
  'repair.export': 'repairs:export',
};

/** A receipt as stored (without `replayed`, which each answer sets). */
export interface CliReceipt<Data> {
  schemaVersion: typeof CLI_SCHEMA_VERSION;
  operationId: string;
  action: RepairAction;
  targetId: string;
  connectionId: string;
  status: 'completed';
  data: Data;
  completedAt: string;
}

/**
 * 03 Reviewed repairs 3: another authorization epoch cannot claim a receipt (403
 * `authorization_changed`); another user or client never finds it (the reads match both).
 */
export function requireSameEpoch(recordedEpoch: string | null, actor: RepairActor): void {
  if (recordedEpoch === null || String(recordedEpoch) !== actor.authEpoch) throw new AppError('authorization_changed');
}

/** The retained receipt of an operation, as a replay or a read answers it. */
export function retainedReceipt(stored: StoredOperation, actor: RepairActor): Record<string, unknown> {
  requireSameEpoch(stored.auth_epoch, actor);
  return { ...stored.receipt, replayed: true };
}
