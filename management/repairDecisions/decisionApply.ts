// 03 CLI operations, `previewed` → `completed`: apply with the exact approvalFingerprint before
// expiry, the reviewed facts rechecked; the reviewer decision, the immutable approval, the
// preview's completion, the audit row and the receipt commit together.

import type pg from 'pg';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import type { RepairActor } from '../repairs/repairActor.js';
import { findConnectionForWorkspace } from '../connections/connectionStore.js';
import type { Deps } from '../deps.js';
import { runOperation, type OperationOutcome, type OperationResponse } from '../operations/idempotency.js';
import { isApprovable, reviewedFacts, sameFacts, type Decision } from './decisionReview.js';
import {
  decideProposal,
  findDecisionPreview,
  insertApproval,
  markPreviewCompleted,
  type DecisionPreviewRecord,
  type ProposalDecision,
} from './decisionStore.js';
import { findProposal, findReplayRun } from './evidenceStore.js';
import { isSameAuthorization } from './previewAuthorization.js';
import { retainedReceipt, type CliReceipt } from '../repairs/receipts.js';

export interface DecisionApplyInput {
  /** The preview's `cliop_` id (the path's operation). */
  operationId: string;
  approvalFingerprint: string;
  idempotencyKey: string;
}

/** 03 CLI operation receipt of `repair.decision`. */
export type DecisionReceipt = CliReceipt<{ proposalId: string; status: Decision; approvalRecordId: string }>;

/**
 * The checks of 03 CLI operations, in this order: a preview of this user and client in this
 * workspace (404 `operation_not_found`); made under the authorization the caller holds now (403
 * `authorization_changed`); not expired (409 `review_expired`); this preview's fingerprint (409
 * `approval_mismatch`); then, under the proposal's row lock, the preview not already applied and
 * the connection, the proposal's status, candidate, validation and replay run as the review
 * showed them (409 `review_stale`).
 */
async function checkPreview(db: pg.PoolClient, deps: Deps, actor: RepairActor, input: DecisionApplyInput): Promise<DecisionPreviewRecord> {
  const preview = hasIdForm(input.operationId, 'cliop_')
    ? await findDecisionPreview(
        db,
        { workspaceId: actor.workspaceId, userId: actor.userId, clientId: actor.clientId, operationId: input.operationId },
        { forUpdate: true },
      )
    : null;
  if (!preview) throw new AppError('operation_not_found');
  if (!isSameAuthorization(preview, actor)) throw new AppError('authorization_changed');
  if (deps.clock.nowMs() >= preview.expiresAt.getTime()) throw new AppError('review_expired');
  if (input.approvalFingerprint !== preview.approvalFingerprint) throw new AppError('approval_mismatch');
  if (preview.completedAt !== null) throw new AppError('review_stale');
  const connection = await findConnectionForWorkspace(db, actor.workspaceId, preview.connectionId);
  const proposal = connection
    ? await findProposal(
        db,
        { workspaceId: actor.workspaceId, connectionId: preview.connectionId, proposalId: preview.proposalId },
        { forUpdate: true },
      )
    : null;
  if (!proposal) throw new AppError('review_stale');
  const run = proposal.validationRunId === null ? null : await findReplayRun(db, proposal.id, proposal.validationRunId);
  if (!isApprovable(proposal, run) || !sameFacts(preview.review, reviewedFacts(proposal, run))) throw new AppError('review_stale');
  return preview;
}

/** The writes of a checked preview; answers its expiry too, for the last look before COMMIT. */
async function performDecision(
  db: pg.PoolClient,
  deps: Deps,
  actor: RepairActor,
  input: DecisionApplyInput,
): Promise<{ outcome: OperationOutcome; expiresAt: Date }> {
  const preview = await checkPreview(db, deps, actor, input);
  const now = deps.clock.now();
  const approvalRecordId = newId('rapr_');
  const decision: ProposalDecision = { status: preview.decision, approvalRecordId, decidedAt: now.toISOString() };
  if (!(await decideProposal(db, preview.proposalId, decision, now))) throw new AppError('review_stale');
  await insertApproval(db, {
    id: approvalRecordId,
    workspaceId: actor.workspaceId,
    connectionId: preview.connectionId,
    proposalId: preview.proposalId,
    operationId: preview.id,
    decision: preview.decision,
    rationale: preview.rationale,
    approvalFingerprint: preview.approvalFingerprint,
    review: preview.review,
    userId: actor.userId,
    clientId: actor.clientId,
    createdAt: now,
  });
  await markPreviewCompleted(db, preview.id, now);
  const receipt: DecisionReceipt = {
    schemaVersion: CLI_SCHEMA_VERSION,
    operationId: preview.id,
    action: 'repair.decision',
    targetId: preview.proposalId,
    connectionId: preview.connectionId,
    status: 'completed',
    data: { proposalId: preview.proposalId, status: preview.decision, approvalRecordId },
    completedAt: now.toISOString(),
  };
  const outcome: OperationOutcome = {
    operationId: preview.id,
    statusCode: 200,
    response: { ...receipt, replayed: false },
    receipt: receipt as unknown as Record<string, unknown>,
    connectionId: preview.connectionId,
    audit: {
      action: 'repair.decision',
      targetId: preview.proposalId,
      metadata: { connectionId: preview.connectionId, decision: preview.decision, approvalRecordId },
    },
  };
  return { outcome, expiresAt: preview.expiresAt };
}

/**
 * POST /v1/cli/operations/{operationId}/apply. Under the one idempotency mechanism: the same
 * request with the same Idempotency-Key by the same user and client replays the receipt
 * (`replayed: true`) and decides nothing again; otherwise the preview is checked (checkPreview)
 * and everything commits after the final authority re-check and a last look at the expiry. The
 * operations row takes the preview's id, so the receipt is read at the same operation id.
 */
export async function applyDecision(deps: Deps, actor: RepairActor, input: DecisionApplyInput): Promise<OperationResponse> {
  let expiresAtMs = Number.POSITIVE_INFINITY;
  return runOperation(
    deps,
    {
      kind: 'repair.decision',
      principal: actor,
      scope: 'repairs:approve',
      authEpoch: actor.authEpoch,
      idempotencyKey: input.idempotencyKey,
      request: { operationId: input.operationId, approvalFingerprint: input.approvalFingerprint },
      epochChangedCode: 'authorization_changed',
      replay: (stored) => retainedReceipt(stored, actor),
      beforeCommit: async () => {
        if (deps.clock.nowMs() >= expiresAtMs) throw new AppError('review_expired');
      },
    },
    async (db) => {
      const { outcome, expiresAt } = await performDecision(db, deps, actor, input);
      expiresAtMs = expiresAt.getTime();
      return outcome;
    },
  );
}
