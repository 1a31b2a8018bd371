// 02 POST /v1/configuration-operations/{operationId}/apply: completes a copy or compensation review
// in one operation transaction (operations/idempotency.ts): the receipt, its Idempotency-Key, the
// audit row and the authority recheck commit with the change or not at all.

import type pg from 'pg';
import { nextRevision } from '../../shared/db/revision.js';
import { AppError } from '../../shared/errors/index.js';
import type { OperationActor } from '../auth/principal.js';
import type { ConnectionRecord } from '../connections/connectionStore.js';
import { loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { setConnectionRevision } from '../contracts/contractStore.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { Deps } from '../deps.js';
import { runOperation, type OperationOutcome, type OperationResponse } from '../operations/idempotency.js';
import { removeArtifacts } from './artifactStore.js';
import { copyArtifacts, findDestinationConflicts, type CopiedArtifacts } from './artifacts.js';
import { assertCompensable } from './compensation.js';
import { findCompletion, findIntegrationIdentity, findOwnReview, type ReviewRecord } from './configurationStore.js';
import { actionOfId, receiptReplay } from './configurationService.js';
import { reviewerOf } from './reviewer.js';
import { proofOf } from './snapshot.js';

export interface ApplyInput {
  operationId: string;
  approvalFingerprint: string;
  idempotencyKey: string;
}

/** Locks the connections in id order (two applies never wait on each other crosswise); a deleted one is 404. */
async function lockConnections(db: pg.PoolClient, workspaceId: string, ids: readonly string[]): Promise<Map<string, ConnectionRecord>> {
  const locked = new Map<string, ConnectionRecord>();
  for (const id of [...ids].sort()) locked.set(id, await loadWorkspaceConnection(db, workspaceId, id, { forUpdate: true }));
  return locked;
}

/**
 * The checks every apply makes, in order: the review is this actor's (404), the fingerprint is its
 * own (409 `approval_mismatch`), it was not completed by another request (409
 * `configuration_preview_stale`: the review is spent), it has not expired (409
 * `configuration_preview_expired`), and the authorization and Integration it was made under are
 * unchanged (409 `configuration_preview_stale`; a deleted Integration is 404).
 */
async function loadApplicableReview(deps: Deps, db: pg.PoolClient, principal: OperationActor, input: ApplyInput): Promise<ReviewRecord> {
  const review = await findOwnReview(db, principal.workspaceId, reviewerOf(principal), input.operationId, { forUpdate: true });
  if (!review) throw new AppError('operation_not_found');
  if (review.fingerprint !== input.approvalFingerprint) throw new AppError('approval_mismatch');
  if (await findCompletion(db, principal.workspaceId, review.id)) throw new AppError('configuration_preview_stale');
  if (deps.clock.nowMs() >= review.expiresAt.getTime()) throw new AppError('configuration_preview_expired');
  if (review.authEpoch !== principal.authEpoch) throw new AppError('configuration_preview_stale');
  const identity = await findIntegrationIdentity(db, principal.workspaceId, review.integrationId);
  if (!identity || identity.deleted) throw new AppError('integration_not_found');
  if (identity.revision !== review.integrationRevision) throw new AppError('configuration_preview_stale');
  return review;
}

/** Copy: source and destination exactly as reviewed (any change, even one reverted, moved a revision). */
async function applyCopy(
  db: pg.PoolClient,
  deps: Deps,
  principal: OperationActor,
  review: ReviewRecord,
  now: Date,
): Promise<{ destination: ConnectionRecord; revision: string; copied: CopiedArtifacts }> {
  const locked = await lockConnections(db, principal.workspaceId, [review.destinationConnectionId, review.sourceConnectionId!]);
  const destination = locked.get(review.destinationConnectionId)!;
  const source = locked.get(review.sourceConnectionId!)!;
  if (
    source.revision !== review.sourceRevision
    || destination.revision !== review.destinationRevision
    || destination.credentialEpoch !== review.destinationCredentialEpoch
  ) {
    throw new AppError('configuration_preview_stale');
  }
  const parts = { contracts: review.snapshot.contracts, rules: review.snapshot.rules };
  await findDestinationConflicts(db, destination.id, parts, deps.config.management.rulesPerConnection);
  const revision = await nextRevision(db);
  const copied = await copyArtifacts(db, {
    workspaceId: principal.workspaceId,
    destination: { connectionId: destination.id, direction: destination.direction, protocol: destination.protocol },
    parts,
    revision,
    previousRevision: destination.revision,
    apiKeyId: reviewerOf(principal).apiKeyId,
    now,
  });
  await setConnectionRevision(db, destination.id, revision);
  return { destination, revision, copied };
}

/** Compensation: the copy must still be reversible (compensation.ts); removes exactly what it created. */
async function applyCompensation(
  db: pg.PoolClient,
  principal: OperationActor,
  review: ReviewRecord,
): Promise<{ destination: ConnectionRecord; revision: string; copied: CopiedArtifacts }> {
  const copy = await findOwnReview(db, principal.workspaceId, reviewerOf(principal), review.originalOperationId!);
  const completion = copy ? await findCompletion(db, principal.workspaceId, copy.id) : null;
  if (!copy || !completion) throw new AppError('configuration_compensation_unavailable');
  const destination = (await lockConnections(db, principal.workspaceId, [review.destinationConnectionId])).get(
    review.destinationConnectionId,
  )!;
  const removed = await assertCompensable(db, { review: copy, completion }, destination);
  await removeArtifacts(
    db,
    destination.id,
    removed.contracts.map((c) => c.destinationContractVersionId),
    removed.rules.map((r) => r.destinationRuleId),
  );
  const revision = await nextRevision(db);
  await setConnectionRevision(db, destination.id, revision);
  return { destination, revision, copied: removed };
}

/**
 * Applies a copy or compensation review. A retry with the original Idempotency-Key answers 200
 * with the original receipt (`replayed` true) and repeats nothing; the key of another operation
 * is 409 `idempotency_conflict`. The review's expiry is checked again just before COMMIT, so a
 * review that expires during apply leaves nothing behind.
 */
export async function applyConfigurationOperation(deps: Deps, principal: OperationActor, input: ApplyInput): Promise<OperationResponse> {
  requireCanonicalWorkspace(principal);
  const action = actionOfId(input.operationId);
  if (!action) throw new AppError('operation_not_found');
  let expiresAtMs = 0;
  return runOperation(
    deps,
    {
      kind: action,
      principal,
      scope: 'integrations:manage',
      idempotencyKey: input.idempotencyKey,
      request: { operationId: input.operationId, approvalFingerprint: input.approvalFingerprint },
      epochChangedCode: 'configuration_preview_stale',
      replay: (stored, db) => receiptReplay(db, principal, stored),
      beforeCommit: async () => {
        if (deps.clock.nowMs() >= expiresAtMs) throw new AppError('configuration_preview_expired');
      },
    },
    async (db): Promise<OperationOutcome> => {
      const review = await loadApplicableReview(deps, db, principal, input);
      expiresAtMs = review.expiresAt.getTime();
      const now = deps.clock.now();
      const { destination, revision, copied } =
        action === 'configuration.copy'
          ? await applyCopy(db, deps, principal, review, now)
          : await applyCompensation(db, principal, review);
      // 02 "Operation receipt (completed)"; the proof is written once and never rewritten.
      const receipt = {
        operationId: review.id,
        action,
        status: 'completed',
        connectionId: destination.id,
        workspaceIntegrationId: destination.integrationId,
        mode: destination.mode,
        revision,
        completedAt: now.toISOString(),
        originalOperationId: review.originalOperationId,
        proof: proofOf(review),
        copiedArtifacts: copied,
      };
      return {
        operationId: review.id,
        statusCode: 201,
        response: { ...receipt, replayed: false, historical: false },
        receipt,
        integrationId: destination.integrationId,
        connectionId: destination.id,
        recordedRevision: revision,
        audit: {
          action,
          targetId: review.id,
          metadata: {
            connectionId: destination.id,
            revision,
            originalOperationId: review.originalOperationId,
            contracts: copied.contracts.length,
            rules: copied.rules.length,
          },
        },
      };
    },
  );
}
