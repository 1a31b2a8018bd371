// 03 "Integration deletion": the preview (a reviewed snapshot with a fingerprint and a 10-minute
// expiry; nothing is deleted) and the status read. The confirmation is in deletionConfirm.ts.

import type pg from 'pg';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import type { OperationActor } from '../auth/principal.js';
import { isHistoricalReceipt } from '../connections/workspaceConnection.js';
import { REVIEW_LIFETIME_MS } from '../configuration/configurationService.js';
import { auditActorOf, reviewerOf } from '../configuration/reviewer.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { readOwnOperation, type StoredOperation } from '../operations/idempotency.js';
import { recheckDeletionActor } from './deletionAuth.js';
import { buildDeletionSnapshot, confirmationFingerprint, type DeletionEvidence, type DeletionSnapshot } from './deletionSnapshot.js';
import {
  countConfiguration,
  findDeletionReview,
  findIntegrationState,
  findLiveConnections,
  findLiveIntegration,
  insertDeletionReview,
  type DeletionConnection,
  type DeletionIntegration,
} from './deletionStore.js';
import { reviewView, type DeletionReviewView, type DeletionTarget } from './deletionViews.js';

/** A review lives as long as every other review of the service (02 Limits: 10 minutes). */
export const DELETION_REVIEW_LIFETIME_MS = REVIEW_LIFETIME_MS;

export const DELETION_ACTIONS = ['integration.delete', 'connection.delete'] as const;

/** The reviewed target as it stands, under the caller's locks when `forUpdate`. */
export interface CurrentTarget {
  integration: DeletionIntegration;
  /** Every live connection of the Integration, in id order. */
  connections: DeletionConnection[];
  snapshot: DeletionSnapshot;
}

/**
 * The target of a deletion route, or 404 `not_found` (03's deletion table): an id of the wrong
 * form (`int_` for the Integration, `wint_` for the connection), an unknown, foreign or deleted
 * Integration, a connection that is not a live one of that Integration. With `forUpdate`, the
 * Integration row and then its connections are locked in id order.
 */
export async function loadTarget(
  db: pg.PoolClient,
  workspaceId: string,
  target: DeletionTarget,
  options: { forUpdate?: boolean } = {},
): Promise<CurrentTarget> {
  requireTargetForm(target);
  const integration = await findLiveIntegration(db, workspaceId, target.workspaceIntegrationId, options);
  if (!integration) throw new AppError('not_found');
  const connections = await findLiveConnections(db, integration.id, options);
  if (target.connectionId !== null && !connections.some((connection) => connection.id === target.connectionId)) {
    throw new AppError('not_found');
  }
  return { integration, connections, snapshot: buildDeletionSnapshot({ integration, connectionId: target.connectionId, connections }) };
}

/** Ids of the wrong form name nothing (01: a `wint_` id is not an `int_` id, and the reverse). */
export function requireTargetForm(target: DeletionTarget): void {
  if (!hasIdForm(target.workspaceIntegrationId, 'wint_')) throw new AppError('not_found');
  if (target.connectionId !== null && !hasIdForm(target.connectionId, 'int_')) throw new AppError('not_found');
}

async function evidenceOf(
  db: pg.PoolClient,
  snapshot: DeletionSnapshot,
  connections: readonly DeletionConnection[],
): Promise<DeletionEvidence[]> {
  const ids = snapshot.connections.map((connection) => connection.connectionId);
  const counts = await countConfiguration(db, ids);
  return connections
    .filter((connection) => ids.includes(connection.id))
    .map((connection) => ({
      connectionId: connection.id,
      latestObservationAt: connection.latestObservationAt ? connection.latestObservationAt.toISOString() : null,
      openIncidentCount: connection.openIncidentCount,
      contractVersions: counts.get(connection.id)?.contractVersions ?? 0,
      rules: counts.get(connection.id)?.rules ?? 0,
    }));
}

/**
 * POST …/deletion-preview. In one REPEATABLE READ transaction: the target (404), the actor's
 * authority, then the stored review and its audit row. Nothing is deleted, locked or revoked.
 */
export async function previewDeletion(deps: Deps, actor: OperationActor, target: DeletionTarget): Promise<DeletionReviewView> {
  requireTargetForm(target);
  return withTransaction(deps.pool, async (db) => {
    // One consistent read of everything the snapshot and the evidence hold.
    await db.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const current = await loadTarget(db, actor.workspaceId, target);
    const evidence = await evidenceOf(db, current.snapshot, current.connections);
    await recheckDeletionActor(db, deps, actor);

    const now = deps.clock.now();
    const id = newId('del_');
    const expiresAt = new Date(now.getTime() + DELETION_REVIEW_LIFETIME_MS);
    const review = {
      id,
      workspaceId: actor.workspaceId,
      ...reviewerOf(actor),
      authEpoch: actor.authEpoch,
      action: target.action,
      integrationId: current.integration.id,
      connectionId: target.connectionId,
      snapshot: current.snapshot,
      evidence,
      fingerprint: confirmationFingerprint({
        operationId: id,
        action: target.action,
        expiresAt: expiresAt.toISOString(),
        snapshot: current.snapshot,
      }),
      expiresAt,
      createdAt: now,
    };
    await insertDeletionReview(db, review);
    await recordAudit(db, {
      workspaceId: actor.workspaceId,
      ...auditActorOf(actor),
      action: `${target.action}.preview`,
      targetId: target.connectionId ?? current.integration.id,
      metadata: {
        operationId: id,
        workspaceIntegrationId: current.integration.id,
        connections: current.snapshot.connections.map((connection) => connection.connectionId),
      },
      at: now,
    });
    return reviewView(review, now.getTime());
  });
}

/**
 * Whether a deletion receipt is historical now (api-conventions: `historical` follows the
 * destination): a connection deletion's connection was deleted or no longer has the recorded
 * revision; an Integration deletion's Integration was deleted or moved. Once a deletion has
 * committed that is always so: a receipt read says what was deleted, never that it is current.
 */
async function isHistoricalDeletion(db: pg.Pool | pg.PoolClient, workspaceId: string, stored: StoredOperation): Promise<boolean> {
  if (stored.connection_id !== null) return isHistoricalReceipt(db, workspaceId, stored);
  const integration = stored.integration_id ? await findIntegrationState(db, workspaceId, stored.integration_id) : null;
  return !integration || integration.deleted || integration.revision !== stored.recorded_revision;
}

/** A completed deletion's receipt as replays and status reads show it. */
export async function deletionReceiptReplay(
  db: pg.Pool | pg.PoolClient,
  actor: OperationActor,
  stored: StoredOperation,
): Promise<Record<string, unknown>> {
  return { ...stored.receipt, replayed: true, historical: await isHistoricalDeletion(db, actor.workspaceId, stored) };
}

/**
 * GET /v1/deletion-operations/{operationId}: the pending review, `expired` past its expiry
 * (server time now), or the completed receipt. Only the actor that made the preview reads it;
 * any other id is 404 `not_found`.
 */
export async function readDeletion(deps: Deps, actor: OperationActor, operationId: string): Promise<Record<string, unknown>> {
  const review = hasIdForm(operationId, 'del_')
    ? await findDeletionReview(deps.pool, { workspaceId: actor.workspaceId, reviewer: reviewerOf(actor), operationId })
    : null;
  if (!review) throw new AppError('not_found');
  if (review.completedAt === null) return { ...reviewView(review, deps.clock.nowMs()) };
  const stored = await readOwnOperation(deps, actor, operationId, DELETION_ACTIONS).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'operation_not_found' ? new AppError('not_found') : error;
  });
  return deletionReceiptReplay(deps.pool, actor, stored);
}
