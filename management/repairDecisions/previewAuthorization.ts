import type { RepairActor } from '../repairs/repairActor.js';
import { approvalFingerprint, type ReviewAuthorization } from './decisionReview.js';
import type { DecisionPreviewRecord } from './decisionStore.js';

/** The authorization a preview binds: this user, this CLI client (null: the console), the workspace epoch and the role now. */
export function authorizationOf(actor: RepairActor): ReviewAuthorization {
  return { userId: actor.userId, clientId: actor.clientId, authEpoch: actor.authEpoch, role: actor.role };
}

/**
 * Whether a preview still stands for this caller: its fingerprint, recomputed from what the
 * preview row keeps under the caller's current authorization, is the one it was issued with.
 * The user and client are those of the preview (it was found by them), so only the workspace
 * authorization epoch or the role can make it differ (03: `authorization_changed`, the operation
 * belongs to an earlier authorization or membership revision).
 */
export function isSameAuthorization(preview: DecisionPreviewRecord, actor: RepairActor): boolean {
  const current = approvalFingerprint({
    operationId: preview.id,
    workspaceId: preview.workspaceId,
    authorization: authorizationOf(actor),
    review: preview.review,
    expiresAt: preview.expiresAt.toISOString(),
  });
  return preview.authEpoch === actor.authEpoch && current === preview.approvalFingerprint;
}
