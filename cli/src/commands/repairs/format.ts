// What the repair commands print without --json: a proposal, a replay run and a decision preview
// in words, as aligned "label  value" lines.

import type { DecisionPreview, DecisionReceipt, Proposal, ReplayRun, RequestReceipt, Validation } from './types.js';

/** Aligned `label  value` lines; rows without a value are left out. */
export function fields(rows: readonly (readonly [string, string | null | undefined])[]): string {
  const shown = rows.filter((row): row is readonly [string, string] => row[1] !== null && row[1] !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

export function validationInWords(validation: Validation | null): string {
  if (validation === null) return 'none yet';
  const valid = validation.valid ? 'valid' : 'not valid';
  const replay = validation.replayPassed ? 'the replay passed' : `the replay did not pass (${validation.replayStatus ?? 'no run'})`;
  return `${valid}, ${replay} (validation ${validation.id})`;
}

export function proposalInWords(proposal: Proposal, run: ReplayRun | null, runNote?: string): string {
  const decision = proposal.decision
    ? `${proposal.decision.status} at ${proposal.decision.decidedAt} (approval record ${proposal.decision.approvalRecordId})`
    : 'none';
  return fields([
    ['Proposal', proposal.id],
    ['Status', proposal.status],
    ['Incident', proposal.incidentId],
    ['Integration', `${proposal.connectionId} (${proposal.mode}, environment ${proposal.environmentId})`],
    ['Created', proposal.createdAt],
    ['Updated', proposal.updatedAt],
    ['Error', proposal.errorCode],
    ['Validation', validationInWords(proposal.validation)],
    ['Replay run', run ? runInWords(run) : runNote],
    ['Decision', decision],
  ]);
}

export function runInWords(run: ReplayRun): string {
  const error = run.errorCode ? `, error ${run.errorCode}` : '';
  return `${run.id} ${run.status}${error}: dataset ${run.datasetId}, adapter ${run.adapterVersion} (${run.adapterFingerprint}), finished ${run.finishedAt}`;
}

export function requestInWords(receipt: RequestReceipt): string {
  const replayed = receipt.replayed ? ' (replayed: an earlier run of this command already requested it)' : '';
  return [
    `Repair proposal ${receipt.data.proposalId} is ${receipt.data.status}${replayed}.`,
    fields([
      ['Incident', receipt.targetId],
      ['Integration', receipt.connectionId],
      ['Replay dataset', receipt.data.datasetId],
      ['Operation', receipt.operationId],
    ]),
    `Follow it with: iw repairs show ${receipt.data.proposalId} --integration ${receipt.connectionId}`,
  ].join('\n');
}

function minutesFromNow(iso: string, nowMs: number): string {
  const minutes = Math.round((Date.parse(iso) - nowMs) / 60_000);
  if (Number.isNaN(minutes)) return '';
  if (minutes <= 0) return ' (already past)';
  return minutes === 1 ? ' (in about a minute)' : ` (in about ${minutes} minutes)`;
}

/**
 * The review of a decision preview in words: what will be decided, on which evidence, until when,
 * and the exact `iw repairs apply` command (with the fingerprint apply needs).
 */
export function previewInWords(preview: DecisionPreview, workspaceFlag: string, nowMs: number): string {
  const { review } = preview;
  const verb = review.decision === 'approved' ? 'Approve' : 'Reject';
  const validation = review.validation;
  const replay = validation
    ? validation.replayPassed
      ? `passed${validation.replayRunId ? ` (run ${validation.replayRunId})` : ''}`
      : `did not pass (${[validation.replayRunId, validation.replayStatus].filter(Boolean).join(', ') || 'no run'})`
    : 'no validation';
  const expired = preview.status === 'expired';
  return [
    `${verb} repair proposal ${review.proposalId} of integration ${review.connectionId} (now ${review.status}).`,
    fields([
      ['Decision', review.decision],
      ['Rationale', review.rationale],
      ['Validation', validationInWords(validation)],
      ['Replay', replay],
      ['Proposal fingerprint', review.proposalFingerprint],
      ['Patch artifact', review.patchArtifactFingerprint],
      ['Repository mapping', review.repositoryMappingId],
      ['Expires', `${preview.expiresAt}${minutesFromNow(preview.expiresAt, nowMs)}`],
      ['Operation', preview.operationId],
      ['Approval fingerprint', preview.approvalFingerprint],
    ]),
    expired
      ? 'This preview has expired: preview the decision again.'
      : `Nothing is decided yet. To ${verb.toLowerCase()} it, run before it expires:\n  iw repairs apply ${preview.operationId} --fingerprint ${preview.approvalFingerprint}${workspaceFlag}`,
  ].join('\n');
}

export function decisionInWords(receipt: DecisionReceipt): string {
  const replayed = receipt.replayed ? ' (replayed: an earlier run of this command already applied it; nothing was decided again)' : '';
  return [
    `Repair proposal ${receipt.data.proposalId} is ${receipt.data.status}${replayed}.`,
    fields([
      ['Approval record', receipt.data.approvalRecordId],
      ['Integration', receipt.connectionId],
      ['Operation', receipt.operationId],
      ['Completed', receipt.completedAt],
    ]),
  ].join('\n');
}
