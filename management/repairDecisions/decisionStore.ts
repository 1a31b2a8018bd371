// Decision previews (03 CLI operations in state `previewed`), the decision they lead to and its
// immutable approval record.

import type { Queryable } from '../../shared/db/pool.js';
import type { Decision, DecisionReview } from './decisionReview.js';

/** A stored decision preview: a `cliop_` operation of one user through one CLI client, or through the console (client null). */
export interface DecisionPreviewRecord {
  id: string;
  workspaceId: string;
  connectionId: string;
  proposalId: string;
  userId: string;
  clientId: string | null;
  authEpoch: string;
  decision: Decision;
  rationale: string;
  approvalFingerprint: string;
  review: DecisionReview;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

interface PreviewRow {
  id: string;
  workspace_id: string;
  connection_id: string;
  proposal_id: string;
  user_id: string;
  cli_client_id: string | null;
  auth_epoch: string;
  decision: Decision;
  rationale: string;
  approval_fingerprint: string;
  review: DecisionReview;
  expires_at: Date;
  created_at: Date;
  completed_at: Date | null;
}

export async function insertDecisionPreview(db: Queryable, preview: Omit<DecisionPreviewRecord, 'completedAt'>): Promise<void> {
  await db.query(
    `INSERT INTO repair_decision_previews (id, workspace_id, connection_id, proposal_id, user_id, cli_client_id, auth_epoch, decision,
                                           rationale, approval_fingerprint, review, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      preview.id,
      preview.workspaceId,
      preview.connectionId,
      preview.proposalId,
      preview.userId,
      preview.clientId,
      preview.authEpoch,
      preview.decision,
      preview.rationale,
      preview.approvalFingerprint,
      JSON.stringify(preview.review),
      preview.expiresAt,
      preview.createdAt,
    ],
  );
}

/**
 * The preview with this id made in this workspace by this user through this CLI client (null: the
 * console), or null: another user's or client's preview is not found, and a console preview is
 * not a CLI client's nor the other way round (03: another client or actor cannot claim an
 * operation). `forUpdate` serialises applies of one preview.
 */
export async function findDecisionPreview(
  db: Queryable,
  input: { workspaceId: string; userId: string; clientId: string | null; operationId: string },
  options: { forUpdate?: boolean } = {},
): Promise<DecisionPreviewRecord | null> {
  const { rows } = await db.query<PreviewRow>(
    `SELECT id, workspace_id, connection_id, proposal_id, user_id, cli_client_id, auth_epoch, decision, rationale, approval_fingerprint,
            review, expires_at, created_at, completed_at
       FROM repair_decision_previews
      WHERE id = $1 AND workspace_id = $2 AND user_id = $3 AND cli_client_id IS NOT DISTINCT FROM $4${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [input.operationId, input.workspaceId, input.userId, input.clientId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    connectionId: row.connection_id,
    proposalId: row.proposal_id,
    userId: row.user_id,
    clientId: row.cli_client_id,
    authEpoch: String(row.auth_epoch),
    decision: row.decision,
    rationale: row.rationale,
    approvalFingerprint: row.approval_fingerprint,
    review: row.review,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

export async function markPreviewCompleted(db: Queryable, previewId: string, now: Date): Promise<void> {
  await db.query('UPDATE repair_decision_previews SET completed_at = $2 WHERE id = $1', [previewId, now]);
}

/** The `decision` member of a decided proposal. */
export interface ProposalDecision {
  status: Decision;
  approvalRecordId: string;
  decidedAt: string;
}

/**
 * Decides a proposal that is still awaiting approval; false when it no longer is (the caller
 * holds its row lock, so only a change it did not see can make this false).
 */
export async function decideProposal(db: Queryable, proposalId: string, decision: ProposalDecision, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE repair_proposals SET status = $2, decision = $3, updated_at = $4
      WHERE id = $1 AND status = 'awaiting_approval'`,
    [proposalId, decision.status, JSON.stringify(decision), now],
  );
  return rowCount === 1;
}

/** An approval record: written once with its decision, never updated or deleted (the table refuses both). */
export interface ApprovalRecord {
  id: string;
  workspaceId: string;
  connectionId: string;
  proposalId: string;
  operationId: string;
  decision: Decision;
  rationale: string;
  approvalFingerprint: string;
  review: DecisionReview;
  userId: string;
  clientId: string | null;
  createdAt: Date;
}

export async function insertApproval(db: Queryable, approval: ApprovalRecord): Promise<void> {
  await db.query(
    `INSERT INTO repair_approvals (id, workspace_id, connection_id, proposal_id, operation_id, decision, rationale, approval_fingerprint,
                                   review, user_id, cli_client_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      approval.id,
      approval.workspaceId,
      approval.connectionId,
      approval.proposalId,
      approval.operationId,
      approval.decision,
      approval.rationale,
      approval.approvalFingerprint,
      JSON.stringify(approval.review),
      approval.userId,
      approval.clientId,
      approval.createdAt,
    ],
  );
}

/** The approval record of a decided proposal, or null. */
export async function findApproval(
  db: Queryable,
  proposalId: string,
): Promise<{ id: string; decision: Decision; approvalFingerprint: string; review: DecisionReview; createdAt: Date } | null> {
  const { rows } = await db.query<{
    id: string;
    decision: Decision;
    approval_fingerprint: string;
    review: DecisionReview;
    created_at: Date;
  }>('SELECT id, decision, approval_fingerprint, review, created_at FROM repair_approvals WHERE proposal_id = $1', [proposalId]);
  const row = rows[0];
  return row
    ? { id: row.id, decision: row.decision, approvalFingerprint: row.approval_fingerprint, review: row.review, createdAt: row.created_at }
    : null;
}
