// 03 "Decision preview": a reviewed decision on a proposal awaiting approval, bound to the caller's
// current authorization and the proposal's evidence, valid for ten minutes. Nothing about the
// proposal changes; apply (decisionApply.ts) makes the decision.

import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { newId } from '../../shared/ids.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import type { RepairActor } from '../repairs/repairActor.js';
import { requirePathConnection } from '../connections/workspaceConnection.js';
import type { Deps } from '../deps.js';
import { auditActorOf, recordAudit } from '../operations/audit.js';
import type { RateSlot } from '../operations/rateWindow.js';
import { reserveRepairAdmission } from '../repairs/repairAdmission.js';
import { approvalFingerprint, isApprovable, reviewedFacts, type Decision, type DecisionReview } from './decisionReview.js';
import { insertDecisionPreview, type DecisionPreviewRecord } from './decisionStore.js';
import { findReplayRun } from './evidenceStore.js';
import { loadPathProposal } from './pathProposal.js';
import { authorizationOf } from './previewAuthorization.js';

/** 03 Limits: a decision preview lives ten minutes (service clock; reads never extend it). */
export const DECISION_PREVIEW_LIFETIME_MS = 10 * 60_000;

/** 03 Reviewed repairs 1 and Limits: the rationale, trimmed, is 10 to 1000 characters. */
export const RATIONALE_MIN_CHARACTERS = 10;
export const RATIONALE_MAX_CHARACTERS = 1000;

export interface DecisionPreviewInput {
  connectionId: string;
  proposalId: string;
  decision: Decision;
  rationale: string;
}

/** 03 Decision preview, in state `previewed` or, past its expiry, `expired`. */
export interface DecisionPreviewView {
  schemaVersion: typeof CLI_SCHEMA_VERSION;
  operationId: string;
  connectionId: string;
  proposalId: string;
  status: 'previewed' | 'expired';
  approvalFingerprint: string;
  expiresAt: string;
  review: DecisionReview;
}

export function previewView(preview: DecisionPreviewRecord, nowMs: number): DecisionPreviewView {
  return {
    schemaVersion: CLI_SCHEMA_VERSION,
    operationId: preview.id,
    connectionId: preview.connectionId,
    proposalId: preview.proposalId,
    status: nowMs >= preview.expiresAt.getTime() ? 'expired' : 'previewed',
    approvalFingerprint: preview.approvalFingerprint,
    expiresAt: preview.expiresAt.toISOString(),
    review: preview.review,
  };
}

/**
 * The trimmed rationale, or 400 `invalid_repair_request` outside 10 to 1000 characters (Unicode
 * code points: a character is what a reader counts, not a UTF-16 unit).
 */
export function normaliseRationale(rationale: string): string {
  const trimmed = rationale.trim();
  const length = [...trimmed].length;
  if (length < RATIONALE_MIN_CHARACTERS || length > RATIONALE_MAX_CHARACTERS) throw new AppError('invalid_repair_request');
  return trimmed;
}

/**
 * POST …/repair-proposals/{proposalId}/decision-preview. In order: the rationale (400), a repair
 * admission (429 `workload_rate_limited`, given back unless the preview is stored), the connection
 * and proposal (404), the proposal approvable (409 `repair_proposal_not_approvable`); then the
 * preview row and its audit row commit together. The proposal is read, never written.
 */
export async function previewDecision(deps: Deps, actor: RepairActor, input: DecisionPreviewInput): Promise<DecisionPreviewView> {
  const rationale = normaliseRationale(input.rationale);
  requirePathConnection(input.connectionId);
  let slot: RateSlot | undefined;
  try {
    return await withTransaction(deps.pool, async (db) => {
      await slot?.release();
      slot = await reserveRepairAdmission(deps, {
        workspaceId: actor.workspaceId,
        accountId: actor.accountId,
        userId: actor.userId,
        clientId: actor.clientId,
        action: 'preview',
      });
      const { proposal } = await loadPathProposal(db, actor.workspaceId, input.connectionId, input.proposalId);
      const run = proposal.validationRunId === null ? null : await findReplayRun(db, proposal.id, proposal.validationRunId);
      if (!isApprovable(proposal, run)) throw new AppError('repair_proposal_not_approvable');

      const now = deps.clock.now();
      const id = newId('cliop_');
      const expiresAt = new Date(now.getTime() + DECISION_PREVIEW_LIFETIME_MS);
      const review: DecisionReview = { ...reviewedFacts(proposal, run), decision: input.decision, rationale };
      const preview: DecisionPreviewRecord = {
        id,
        workspaceId: actor.workspaceId,
        connectionId: proposal.connectionId,
        proposalId: proposal.id,
        userId: actor.userId,
        clientId: actor.clientId,
        authEpoch: actor.authEpoch,
        decision: input.decision,
        rationale,
        approvalFingerprint: approvalFingerprint({
          operationId: id,
          workspaceId: actor.workspaceId,
          authorization: authorizationOf(actor),
          review,
          expiresAt: expiresAt.toISOString(),
        }),
        review,
        expiresAt,
        createdAt: now,
        completedAt: null,
      };
      await insertDecisionPreview(db, preview);
      await recordAudit(db, {
        workspaceId: actor.workspaceId,
        ...auditActorOf(actor),
        action: 'repair.decision.preview',
        targetId: proposal.id,
        metadata: { operationId: id, connectionId: proposal.connectionId, decision: input.decision },
        at: now,
      });
      return previewView(preview, now.getTime());
    });
  } catch (error) {
    await slot?.release().catch(() => undefined);
    throw error;
  }
}
