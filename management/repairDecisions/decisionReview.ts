// 03 "Decision preview": what a reviewer sees and what their approval binds. The review names
// the proposal's state and evidence; the approval fingerprint binds that review to one
// operation, one authorization (user, CLI client or none for the console, workspace
// authorization epoch, role), one decision and rationale, and the preview's expiry.

import { fingerprint } from '../../shared/fingerprint.js';
import type { ProposalRecord, ProposalStatus, ReplayRunRecord, ReviewValidation } from './evidenceStore.js';

/** 03 Reviewed repairs 1. */
export type Decision = 'approved' | 'rejected';

export interface DecisionReview {
  proposalId: string;
  connectionId: string;
  status: ProposalStatus;
  proposalFingerprint: string;
  validation: ReviewValidation | null;
  /** The candidate (its JSON Patch, base and result schemas) the decision is about. */
  patchArtifactFingerprint: string | null;
  /** Proposals are never bound to a source repository here (00-decisions §6: no code host). */
  repositoryMappingId: null;
  decision: Decision;
  rationale: string;
}

/** The facts of a proposal a review shows: every member but the decision and its rationale. */
export type ReviewedFacts = Omit<DecisionReview, 'decision' | 'rationale'>;

/** Who a preview is made for, as it stood when it was made. */
export interface ReviewAuthorization {
  userId: string;
  /** The CLI client; null for a decision made through the console. */
  clientId: string | null;
  authEpoch: string;
  role: string;
}

/**
 * A validation an export or a decision can rely on: the candidate valid, its replay passed, and
 * the replay run the proposal names recorded as passed.
 */
export function hasPassedValidation(proposal: ProposalRecord, run: ReplayRunRecord | null): boolean {
  const validation = proposal.validation;
  return (
    validation?.valid === true
    && validation.replayPassed
    && proposal.candidate !== null
    && proposal.candidateFingerprint !== null
    && run !== null
    && run.status === 'passed'
    && run.id === validation.replayRunId
  );
}

/** 03 States and transitions: only a proposal awaiting approval, with a valid candidate and a passed replay, can be decided. */
export function isApprovable(proposal: ProposalRecord, run: ReplayRunRecord | null): boolean {
  return proposal.status === 'awaiting_approval' && hasPassedValidation(proposal, run);
}

/**
 * The proposal's fingerprint: its identity, the evidence it was generated from, its status, its
 * candidate and the replay run that validated it. Any of them moving makes a review stale.
 */
export function proposalFingerprint(proposal: ProposalRecord, run: ReplayRunRecord | null): string {
  return fingerprint({
    id: proposal.id,
    incidentId: proposal.incidentId,
    connectionId: proposal.connectionId,
    mode: proposal.mode,
    datasetId: proposal.datasetId,
    contractVersionId: proposal.contractVersionId,
    contractOperationId: proposal.contractOperationId,
    operationKey: proposal.operationKey,
    status: proposal.status,
    candidateFingerprint: proposal.candidateFingerprint,
    validation: proposal.validation,
    replayRun: run,
  });
}

export function reviewedFacts(proposal: ProposalRecord, run: ReplayRunRecord | null): ReviewedFacts {
  return {
    proposalId: proposal.id,
    connectionId: proposal.connectionId,
    status: proposal.status,
    proposalFingerprint: proposalFingerprint(proposal, run),
    validation: proposal.validation,
    patchArtifactFingerprint: proposal.candidateFingerprint,
    repositoryMappingId: null,
  };
}

/** Whether the facts a review showed still hold (apply's `review_stale` check). */
export function sameFacts(review: DecisionReview, current: ReviewedFacts): boolean {
  return (
    review.proposalFingerprint === current.proposalFingerprint
    && review.patchArtifactFingerprint === current.patchArtifactFingerprint
    && fingerprint(review.validation) === fingerprint(current.validation)
    && review.status === current.status
  );
}

/**
 * The `approvalFingerprint` of a preview. Everything in it is kept on the preview row, so apply
 * recomputes it under the caller's current authorization: a different result means the epoch or
 * the role moved since the preview (403 `authorization_changed`).
 */
export function approvalFingerprint(input: {
  operationId: string;
  workspaceId: string;
  authorization: ReviewAuthorization;
  review: DecisionReview;
  expiresAt: string;
}): string {
  return fingerprint({
    operationId: input.operationId,
    workspaceId: input.workspaceId,
    authorization: input.authorization,
    review: input.review,
    expiresAt: input.expiresAt,
  });
}
