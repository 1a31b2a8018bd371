// 03 "Integration deletion" confirmation: the reviewed connection (or every connection of the
// reviewed Integration) deleted, its credentials revoked, with the receipt and the audit row, in
// one transaction.

import type pg from 'pg';
import { nextRevision } from '../../shared/db/revision.js';
import { AppError } from '../../shared/errors/index.js';
import { bumpCredentialEpoch } from '../../shared/redis.js';
import type { OperationActor } from '../auth/principal.js';
import { reviewerOf } from '../configuration/reviewer.js';
import { readCredentialState, type CredentialState } from '../credentials/credentialStore.js';
import type { Deps } from '../deps.js';
import { runOperation, type OperationOutcome, type OperationResponse } from '../operations/idempotency.js';
import { DELETION_KEY_SCOPE } from './deletionAuth.js';
import { deletionReceiptReplay, loadTarget, requireTargetForm, type CurrentTarget } from './deletionService.js';
import {
  deleteConnection,
  findDeletionReview,
  markDeletionCompleted,
  updateIntegration,
  type DeletionReviewRecord,
} from './deletionStore.js';
import type { DeletionReceipt, DeletionTarget } from './deletionViews.js';

export interface DeletionConfirmation {
  /** The `del_` id of the preview being confirmed. */
  operationId: string;
  /** The Integration's name, exactly (case-sensitive, untrimmed). */
  confirmName: string;
  /** The preview's `fingerprint`. */
  fingerprint: string;
  idempotencyKey: string;
}

const stale = () => new AppError('deletion_preview_stale');

/**
 * The review's checks, in this order: a review of this actor (404 `not_found`); one of this route's
 * target and kind, confirmed with its own fingerprint (409 `operation_mismatch`: the confirmation
 * names another operation); the exact name (400 `confirmation_mismatch`); not already confirmed
 * under another Idempotency-Key (stale: it is spent); not expired; the authorization epoch it was
 * made under (stale); then, under the locks of the Integration and its connections, the target
 * still there (404) and the snapshot rebuilt from the current state equal to the reviewed one
 * (stale).
 */
async function checkReview(
  db: pg.PoolClient,
  deps: Deps,
  actor: OperationActor,
  target: DeletionTarget,
  input: DeletionConfirmation,
): Promise<{ review: DeletionReviewRecord; current: CurrentTarget }> {
  const review = await findDeletionReview(
    db,
    { workspaceId: actor.workspaceId, reviewer: reviewerOf(actor), operationId: input.operationId },
    { forUpdate: true },
  );
  if (!review) throw new AppError('not_found');
  if (
    review.action !== target.action
    || review.integrationId !== target.workspaceIntegrationId
    || review.connectionId !== target.connectionId
  ) {
    throw new AppError('operation_mismatch');
  }
  if (input.fingerprint !== review.fingerprint) throw new AppError('operation_mismatch');
  if (input.confirmName !== review.snapshot.integration.name) throw new AppError('confirmation_mismatch');
  if (review.completedAt !== null) throw stale();
  if (deps.clock.nowMs() >= review.expiresAt.getTime()) throw new AppError('deletion_preview_expired');
  if (review.authEpoch !== actor.authEpoch) throw stale();
  const current = await loadTarget(db, actor.workspaceId, target, { forUpdate: true });
  if (current.snapshot.fingerprint !== review.snapshot.fingerprint) throw stale();
  return { review, current };
}

/** The writes of a checked review; answers the review's expiry for the last look before COMMIT. */
async function performDeletion(
  db: pg.PoolClient,
  deps: Deps,
  actor: OperationActor,
  target: DeletionTarget,
  input: DeletionConfirmation,
): Promise<{ outcome: OperationOutcome; expiresAt: Date }> {
  const { review, current } = await checkReview(db, deps, actor, target, input);
  const now = deps.clock.now();
  const deletedIds = review.snapshot.connections.map((connection) => connection.connectionId);
  const credentials: CredentialState[] = [];
  for (const connection of current.connections.filter((c) => deletedIds.includes(c.id))) {
    const revision = await nextRevision(db);
    await deleteConnection(db, { connection, revision, now });
    credentials.push(
      await readCredentialState(db, {
        id: connection.id,
        environmentId: connection.environmentId,
        mode: connection.mode,
        revision,
        credentialStatus: connection.credentialStatus === 'active' ? 'revoked' : connection.credentialStatus,
      }),
    );
  }
  // The Integration lost connections (its revision moves: reviews of it are stale) or is deleted.
  const integrationRevision = await nextRevision(db);
  const integrationDeleted = target.connectionId === null;
  await updateIntegration(db, {
    integrationId: current.integration.id,
    revision: integrationRevision,
    deletedAt: integrationDeleted ? now : null,
  });
  await markDeletionCompleted(db, review.id, now);

  const receipt: DeletionReceipt = {
    operationId: review.id,
    action: review.action,
    status: 'completed',
    workspaceIntegrationId: current.integration.id,
    connectionId: target.connectionId,
    name: current.integration.name,
    fingerprint: review.fingerprint,
    completedAt: now.toISOString(),
    integrationRevision,
    integrationDeleted,
    credentials,
  };
  const outcome: OperationOutcome = {
    operationId: review.id,
    statusCode: 201,
    response: { ...receipt, replayed: false, historical: false },
    receipt: receipt as unknown as Record<string, unknown>,
    integrationId: current.integration.id,
    connectionId: target.connectionId,
    recordedRevision: target.connectionId === null ? integrationRevision : credentials[0].revision,
    audit: {
      action: review.action,
      targetId: target.connectionId ?? current.integration.id,
      metadata: { workspaceIntegrationId: current.integration.id, connections: deletedIds, integrationRevision, integrationDeleted },
    },
  };
  return { outcome, expiresAt: review.expiresAt };
}

/**
 * POST …/deletion. Under the one idempotency mechanism: the same request with the same
 * Idempotency-Key and actor replays the receipt (200) and recreates nothing; otherwise the review
 * is rechecked (checkReview), and the deletion, the revoked credentials, the receipt and the audit
 * row commit together after the final authority check and a last look at the review's expiry.
 * The ingest edge's credential epoch of every deleted connection moves before COMMIT and again
 * after it, as on a credential revocation, so the edge refuses the old token on its next request.
 */
export async function confirmDeletion(
  deps: Deps,
  actor: OperationActor,
  target: DeletionTarget,
  input: DeletionConfirmation,
): Promise<OperationResponse> {
  requireTargetForm(target);
  let expiresAtMs = Number.POSITIVE_INFINITY;
  let deletedIds: string[] = [];
  const result = await runOperation(
    deps,
    {
      kind: target.action,
      principal: actor,
      scope: DELETION_KEY_SCOPE,
      idempotencyKey: input.idempotencyKey,
      request: {
        target,
        body: { operationId: input.operationId, confirmName: input.confirmName, fingerprint: input.fingerprint },
      },
      // Authority that moved under the confirmation is a change since the review: review again.
      epochChangedCode: 'deletion_preview_stale',
      replay: (stored, db) => deletionReceiptReplay(db, actor, stored),
      beforeCommit: async () => {
        if (deps.clock.nowMs() >= expiresAtMs) throw new AppError('deletion_preview_expired');
        for (const id of deletedIds) await bumpCredentialEpoch(deps.redis, actor.accountId, id);
      },
    },
    async (db) => {
      deletedIds = [];
      const { outcome, expiresAt } = await performDeletion(db, deps, actor, target, input);
      expiresAtMs = expiresAt.getTime();
      deletedIds = (outcome.receipt as unknown as DeletionReceipt).credentials.map((credential) => credential.connectionId);
      return outcome;
    },
  );
  if (result.statusCode === 201) {
    // Committed: again after COMMIT, so a credential load that raced the commit is dropped too.
    for (const id of deletedIds) await bumpCredentialEpoch(deps.redis, actor.accountId, id).catch(() => undefined);
  }
  return result;
}
