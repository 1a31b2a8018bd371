import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import type { Deps } from '../deps.js';
import type { DecisionPreviewView } from '../repairDecisions/decisionPreview.js';
import { hasPassedValidation, isApprovable } from '../repairDecisions/decisionReview.js';
import type { DecisionReceipt } from '../repairDecisions/decisionApply.js';
import { findApproval } from '../repairDecisions/decisionStore.js';
import { findProposal, findReplayRun, type ProposalRecord, type ReplayRunRecord } from '../repairDecisions/evidenceStore.js';
import { readConsoleRepairOperation } from '../repairDecisions/console/consoleOperationRead.js';
import { readConnectionDataset, readConnectionProposal } from '../repairs/repairReads.js';
import type { DatasetView, ProposalView } from '../repairs/repairStore.js';
import { consoleWorkspacePage, type WorkspacePageContext } from './consoleRoute.js';
import { requiredQuery } from './consoleWorkspace.js';
import { repairBody, reviewBody } from './repairsView.js';

/** The decision of a decided proposal as its immutable approval record keeps it. */
export interface RepairApproval {
  id: string;
  decision: 'approved' | 'rejected';
  rationale: string;
  approvalFingerprint: string;
  decidedAt: string;
}

/** What the proposal page shows: the proposal read, its candidate, frozen evidence, replay run and decision. */
export interface RepairPageData {
  slug: string;
  connectionId: string;
  proposal: ProposalView;
  record: ProposalRecord;
  dataset: DatasetView;
  run: ReplayRunRecord | null;
  approval: RepairApproval | null;
  /** A current owner or admin of an active workspace: the decision and export forms are theirs. */
  canAct: boolean;
  /** Awaiting approval with a passed validation (03 Repair proposal: only then decided). */
  approvable: boolean;
  /** Approved with a passed validation: the bundle can be asked for. */
  exportable: boolean;
}

/** The page's viewer may decide: an owner or admin, in an active workspace (the session routes check it again). */
function canAct(ctx: WorkspacePageContext): boolean {
  return ctx.workspace.role !== 'viewer' && ctx.workspace.status === 'active';
}

/**
 * A proposal of the connection as any member reads it: the CLI's proposal and dataset reads (404
 * `connection_not_found`, `repair_proposal_not_found`, the same answers as theirs), then the
 * candidate, the replay run and the approval the decision and export routes read.
 */
export async function repairPageData(
  deps: Deps,
  ctx: WorkspacePageContext,
  integration: string | undefined,
  proposalId: string,
): Promise<RepairPageData> {
  const connectionId = requiredQuery(integration, 'connection_required');
  const workspaceId = ctx.workspace.id;
  const proposal = await readConnectionProposal(deps, workspaceId, connectionId, proposalId);
  const record = await findProposal(deps.pool, { workspaceId, connectionId, proposalId: proposal.id });
  if (!record) throw new AppError('repair_proposal_not_found');
  const dataset = await readConnectionDataset(deps, workspaceId, connectionId, record.datasetId);
  const run = record.validationRunId === null ? null : await findReplayRun(deps.pool, record.id, record.validationRunId);
  const stored = record.status === 'approved' || record.status === 'rejected' ? await findApproval(deps.pool, record.id) : null;
  const approval = stored
    ? {
        id: stored.id,
        decision: stored.decision,
        rationale: stored.review.rationale,
        approvalFingerprint: stored.approvalFingerprint,
        decidedAt: stored.createdAt.toISOString(),
      }
    : null;
  return {
    slug: ctx.workspace.slug,
    connectionId,
    proposal,
    record,
    dataset,
    run,
    approval,
    canAct: canAct(ctx),
    approvable: isApprovable(record, run),
    exportable: record.status === 'approved' && hasPassedValidation(record, run),
  };
}

/** A decision review as the review page shows it: the console preview, or its decision receipt once applied. */
export type RepairOperationView =
  | { kind: 'preview'; preview: DecisionPreviewView }
  | { kind: 'receipt'; receipt: DecisionReceipt & { replayed: boolean } };

export interface ReviewPageData {
  slug: string;
  connectionId: string;
  proposalId: string;
  operation: RepairOperationView;
  /** The workspace is active: the review can be applied. */
  active: boolean;
}

/**
 * The signed-in owner's or admin's own console review of this proposal: the console's operation
 * read (another user's or a CLI client's operation is 404 `operation_not_found`, as is one of
 * another proposal or connection).
 */
export async function reviewPageData(
  deps: Deps,
  ctx: WorkspacePageContext,
  integration: string | undefined,
  proposalId: string,
  operationId: string,
): Promise<ReviewPageData> {
  const connectionId = requiredQuery(integration, 'connection_required');
  const answer = await readConsoleRepairOperation(deps, ctx.session, ctx.workspace.slug, operationId);
  const operation: RepairOperationView | null =
    'review' in answer
      ? { kind: 'preview', preview: answer as unknown as DecisionPreviewView }
      : answer.action === 'repair.decision'
        ? { kind: 'receipt', receipt: answer as unknown as DecisionReceipt & { replayed: boolean } }
        : null;
  const target = operation?.kind === 'preview' ? operation.preview : operation?.receipt.data;
  if (!operation || !target || target.proposalId !== proposalId || answer.connectionId !== connectionId) {
    throw new AppError('operation_not_found');
  }
  return { slug: ctx.workspace.slug, connectionId, proposalId, operation, active: ctx.workspace.status === 'active' };
}

const ID = { type: 'string', maxLength: 64 } as const;

/**
 * GET /console/workspaces/{slug}/repairs/{proposalId}?integration=int_…: one repair proposal, for
 * every member (the forms for a current owner or admin of an active workspace). GET
 * /console/workspaces/{slug}/repairs/{proposalId}/review/{operationId}?integration=int_…: the
 * user's decision review and its Apply button, then the receipt. Unknown or foreign proposals and
 * operations are the reads' catalogue 404s.
 */
export default function repairsPages(app: FastifyInstance): void {
  consoleWorkspacePage<{ integration?: string }>(app, 'repairs/:proposalId', { query: { integration: ID } }, async (request, ctx) => {
    const data = await repairPageData(app.deps, ctx, request.query.integration, request.params.proposalId ?? '');
    return ctx.render({ title: 'Repair', nav: 'integrations', body: repairBody(data) });
  });
  consoleWorkspacePage<{ integration?: string }>(
    app,
    'repairs/:proposalId/review/:operationId',
    { query: { integration: ID } },
    async (request, ctx) => {
      const { proposalId = '', operationId = '' } = request.params;
      // A viewer has made no review: theirs is not found.
      if (ctx.workspace.role === 'viewer') throw new AppError('operation_not_found');
      const data = await reviewPageData(app.deps, ctx, request.query.integration, proposalId, operationId);
      return ctx.render({ title: 'Review the decision', nav: 'integrations', body: reviewBody(data) });
    },
  );
}
