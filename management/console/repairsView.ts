import type { ProposalListItem } from '../repairs/repairStore.js';
import { ACTIVE_PROPOSAL_STATUSES } from '../repairs/repairStore.js';
import { errorTemplate, fieldError, fieldErrorId, formError } from './consoleForm.js';
import { localTime } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';
import { workspacePagePath } from './layout.js';
import {
  APPLY_FORM_ERRORS,
  CHANGE_KIND_WORDS,
  DECISION_FORM_ERRORS,
  EXPORT_FORM_ERRORS,
  PROPOSAL_STATUS_WORDS,
  REQUEST_FORM_ERRORS,
  failureInWords,
} from './repairWords.js';
import type { RepairPageData, ReviewPageData } from './repairsPage.js';

/** The files of an export bundle, in order (docs/decisions/repairs.md "The export bundle"). */
const BUNDLE_FILES = 4;

const slugPath = (slug: string) => `/workspaces/${encodeURIComponent(slug)}`;
const connectionPath = (slug: string, connectionId: string) => `${slugPath(slug)}/connections/${encodeURIComponent(connectionId)}`;
const integrationQuery = (connectionId: string) => `?integration=${encodeURIComponent(connectionId)}`;

/** The console page of a proposal. */
export function repairPagePath(slug: string, connectionId: string, proposalId: string): string {
  return workspacePagePath(slug, `repairs/${encodeURIComponent(proposalId)}${integrationQuery(connectionId)}`);
}

function incidentPagePath(slug: string, connectionId: string, incidentId: string): string {
  return workspacePagePath(slug, `incidents/${encodeURIComponent(incidentId)}${integrationQuery(connectionId)}`);
}

function statusWords(status: ProposalListItem['status']): SafeHtml {
  return html`<span class="proposal-status" data-status="${status}">${PROPOSAL_STATUS_WORDS[status]}</span>`;
}

/** What the incident page needs to show its repairs. */
export interface IncidentRepairs {
  slug: string;
  connectionId: string;
  incidentId: string;
  incidentOpen: boolean;
  proposals: readonly ProposalListItem[];
  /** A current owner or admin of an active workspace. */
  canAct: boolean;
}

/**
 * The incident page's "Repairs" section: the incident's proposals, newest first, and the request
 * form while the incident is open and none is in progress (03 Limits: one per incident).
 */
export function incidentRepairsSection(data: IncidentRepairs): SafeHtml {
  const { slug, connectionId, incidentId } = data;
  const active = data.proposals.some((proposal) => ACTIVE_PROPOSAL_STATUSES.includes(proposal.status));
  const list =
    data.proposals.length === 0
      ? html`<p class="empty">No repair has been requested for this incident.</p>`
      : html`<ul class="rows repairs">${data.proposals.map(
          (proposal) => html`<li class="repair" data-proposal="${proposal.id}"><div>
<a href="${repairPagePath(slug, connectionId, proposal.id)}">Repair <code>${proposal.id}</code></a>
<span class="hint">${statusWords(proposal.status)}, requested ${localTime(proposal.createdAt)}</span></div></li>`,
        )}</ul>`;
  const form =
    data.incidentOpen && !active && data.canAct
      ? html`<form id="repair-request" class="stack" data-idempotent
 data-api="POST ${connectionPath(slug, connectionId)}/incidents/${encodeURIComponent(incidentId)}/repair-proposals"
 data-next="${workspacePagePath(slug, 'repairs/{data.proposalId}')}${integrationQuery(connectionId)}">
<p class="hint">A repair proposes a contract change that accepts the observed payloads, checked by replaying every observation of this incident against it. Nothing changes until it is approved and applied by you.</p>
<div class="actions"><button type="submit" class="primary">Request a repair</button></div>
${formError('repair-request')}
${errorTemplate(REQUEST_FORM_ERRORS)}
</form>`
      : null;
  return html`<section class="incident-repairs" aria-labelledby="repairs-heading">
<h2 id="repairs-heading">Repairs</h2>
${list}
${form}
</section>`;
}

function changeLines(data: RepairPageData): SafeHtml {
  const candidate = data.record.candidate;
  if (!candidate) return html`<p class="empty">No candidate yet.</p>`;
  if (candidate.changes.length === 0) return html`<p class="empty">The candidate changes nothing.</p>`;
  return html`<ul class="changes">${candidate.changes.map(
    (change) =>
      html`<li class="change" data-kind="${change.kind}"><strong>${CHANGE_KIND_WORDS[change.kind]}</strong> at <code>${change.schemaPath || '/'}</code>: ${change.before} → ${change.after} <span class="hint">(${change.fixtureCount} ${change.fixtureCount === 1 ? 'observation' : 'observations'}, payload <code>${change.payloadPath || '/'}</code>)</span></li>`,
  )}</ul>
<p class="hint">As a JSON Patch of the operation schema, one line per operation:</p>
<ul class="patch">${candidate.patch.map((operation) => html`<li><code>${operation.op} ${operation.path}</code></li>`)}</ul>`;
}

function evidenceFacts(data: RepairPageData): SafeHtml {
  const { dataset, run, record } = data;
  const validation = record.validation;
  return html`<h2>Frozen evidence</h2>
<dl class="incident-facts evidence-facts">
<dt>Observations</dt><dd class="fixture-count">${dataset.fixtureCount}</dd>
<dt>Manifest hash</dt><dd><code class="manifest-hash">${dataset.manifestHash}</code></dd>
<dt>Dataset</dt><dd><code>${dataset.id}</code> (frozen ${localTime(dataset.createdAt)})</dd>
</dl>
<h2>Replay run</h2>
${
  run
    ? html`<dl class="incident-facts run-facts">
<dt>Status</dt><dd class="run-status" data-status="${run.status}">${run.status === 'passed' ? 'Passed: every observation conforms to the candidate' : 'Failed: some observations do not conform'}</dd>
<dt>Conforming</dt><dd class="run-counts">${run.conformingCount} of ${run.fixtureCount}</dd>
<dt>Run</dt><dd><code>${run.id}</code></dd>
<dt>Comparison</dt><dd><code>${run.adapterVersion}</code></dd>
<dt>Comparison fingerprint</dt><dd><code>${run.adapterFingerprint}</code></dd>
${validation ? html`<dt>Checked schema fingerprint</dt><dd><code>${validation.schemaChecksFingerprint}</code></dd>` : null}
${record.candidateFingerprint ? html`<dt>Candidate fingerprint</dt><dd><code class="candidate-fingerprint">${record.candidateFingerprint}</code></dd>` : null}
</dl>`
    : html`<p class="empty">Not replayed yet.</p>`
}`;
}

function decisionForm(data: RepairPageData): SafeHtml {
  const { slug, connectionId, proposal } = data;
  const id = 'repair-decision';
  const next = `${workspacePagePath(slug, `repairs/${encodeURIComponent(proposal.id)}/review/{operationId}`)}${integrationQuery(connectionId)}`;
  return html`<h2 id="decision-heading">Your decision</h2>
<form id="${id}" class="stack" aria-labelledby="decision-heading"
 data-api="POST ${connectionPath(slug, connectionId)}/repair-proposals/${encodeURIComponent(proposal.id)}/decision-preview"
 data-next="${next}">
<fieldset>
<legend>Decision</legend>
<label class="check"><input type="radio" name="decision" value="approved" checked> Approve the change</label>
<label class="check"><input type="radio" name="decision" value="rejected"> Reject it</label>
</fieldset>
<label for="${id}-rationale">Rationale (10 to 1000 characters)</label>
<textarea id="${id}-rationale" name="rationale" rows="4" aria-describedby="${fieldErrorId(id, 'rationale')}"></textarea>
${fieldError(id, 'rationale')}
<p class="hint">Next you review the decision, then apply it within ten minutes.</p>
<div class="actions"><button type="submit" class="primary">Review the decision</button></div>
${formError(id)}
${errorTemplate(DECISION_FORM_ERRORS)}
</form>`;
}

function exportForm(data: RepairPageData): SafeHtml {
  const { slug, connectionId, proposal } = data;
  const id = 'repair-export';
  const files = Array.from({ length: BUNDLE_FILES }, (_, index) => html`<li><code data-result="data.files.${index}.name"></code></li>`);
  return html`<h2 id="export-heading">Repair bundle</h2>
<p class="hint">The bundle holds the change as a JSON Patch and an OpenAPI Overlay, what drifted in words, and a typed guard for the new shape. Downloading it changes nothing in your project.</p>
<form id="${id}" class="stack" aria-labelledby="export-heading" data-idempotent data-hide-on-success
 data-api="POST ${connectionPath(slug, connectionId)}/repair-proposals/${encodeURIComponent(proposal.id)}/export"
 data-download="data" data-download-name="data.filename" data-show="#repair-bundle">
<div class="actions"><button type="submit" class="primary">Download the repair bundle</button></div>
${formError(id)}
${errorTemplate(EXPORT_FORM_ERRORS)}
</form>
<section id="repair-bundle" class="outcome" role="status" hidden>
<h3 tabindex="-1">Bundle downloaded</h3>
<p>Saved as <code data-result="data.filename"></code>.json, with these files:</p>
<ul class="bundle-files">${files}</ul>
<p>Bundle fingerprint: <code class="bundle-fingerprint" data-result="data.fingerprint"></code></p>
</section>`;
}

function decisionFacts(data: RepairPageData): SafeHtml | null {
  const approval = data.approval;
  if (!approval) return null;
  return html`<h2>Decision</h2>
<dl class="incident-facts decision-facts">
<dt>Decision</dt><dd class="decision" data-decision="${approval.decision}">${approval.decision === 'approved' ? 'Approved' : 'Rejected'}</dd>
<dt>Rationale</dt><dd class="rationale">${approval.rationale}</dd>
<dt>Decided</dt><dd>${localTime(approval.decidedAt)}</dd>
<dt>Approval record</dt><dd><code>${approval.id}</code></dd>
<dt>Approval fingerprint</dt><dd><code>${approval.approvalFingerprint}</code></dd>
</dl>`;
}

/** What the proposal's status asks of the reader now. */
function statusBlock(data: RepairPageData): SafeHtml | null {
  const { proposal } = data;
  if (proposal.status === 'queued' || proposal.status === 'generating' || proposal.status === 'validating') {
    return html`<p class="in-progress" role="status">The repair worker is generating the candidate and replaying the evidence against it; this takes seconds. <a href="${repairPagePath(data.slug, data.connectionId, proposal.id)}">Reload</a> to see the result.</p>`;
  }
  if (proposal.status === 'failed') return html`<p class="failure">${failureInWords(proposal.errorCode)}</p>`;
  if (proposal.status === 'awaiting_approval' && !data.approvable) {
    return html`<p class="failure">The validation did not pass: this candidate cannot be approved.</p>`;
  }
  return null;
}

/** The proposal page. */
export function repairBody(data: RepairPageData): SafeHtml {
  const { slug, connectionId, proposal, record } = data;
  const readOnly =
    !data.canAct && (data.approvable || data.exportable)
      ? html`<p class="hint read-only">Only an owner or admin of this workspace, while it is active, decides on repairs and downloads them.</p>`
      : null;
  return html`<p><a href="${incidentPagePath(slug, connectionId, proposal.incidentId)}">The incident</a></p>
<dl class="incident-facts repair-facts">
<dt>Status</dt><dd>${statusWords(proposal.status)}</dd>
<dt>Repair</dt><dd><code>${proposal.id}</code></dd>
<dt>Operation</dt><dd><code>${record.operationKey}</code></dd>
<dt>Connection</dt><dd><code class="connection-id">${connectionId}</code> (${proposal.mode === 'live' ? 'Live' : 'Sandbox'})</dd>
<dt>Requested</dt><dd>${localTime(proposal.createdAt)}</dd>
</dl>
${statusBlock(data)}
<h2>What the repair changes</h2>
${changeLines(data)}
${evidenceFacts(data)}
${decisionFacts(data)}
${readOnly}
${data.approvable && data.canAct ? decisionForm(data) : null}
${data.exportable && data.canAct ? exportForm(data) : null}`;
}

function applyForm(data: ReviewPageData, approvalFingerprint: string, operationId: string): SafeHtml {
  const id = 'repair-apply';
  return html`<form id="${id}" class="stack" data-idempotent data-hide-on-success data-show="#repair-receipt"
 data-api="POST ${slugPath(data.slug)}/repair-operations/${encodeURIComponent(operationId)}/apply">
<input type="hidden" name="approvalFingerprint" value="${approvalFingerprint}">
<p class="hint">Nothing is recorded until you apply the decision, before the review expires.</p>
<div class="actions"><button type="submit" class="primary">Apply the decision</button></div>
${formError(id)}
${errorTemplate(APPLY_FORM_ERRORS)}
</form>
<section id="repair-receipt" class="outcome" role="status" hidden>
<h2 tabindex="-1">Decision recorded</h2>
<dl class="incident-facts">
<dt>Decision</dt><dd class="receipt-decision" data-result="data.status"></dd>
<dt>Approval record</dt><dd><code data-result="data.approvalRecordId"></code></dd>
<dt>Recorded at</dt><dd><time data-result="completedAt"></time></dd>
</dl>
</section>`;
}

/** The review page: the preview and its Apply button, or the decision receipt once applied. */
export function reviewBody(data: ReviewPageData): SafeHtml {
  const back = html`<p><a href="${repairPagePath(data.slug, data.connectionId, data.proposalId)}">Back to the repair</a></p>`;
  if (data.operation.kind === 'receipt') {
    const { receipt } = data.operation;
    return html`<p class="applied" role="status">This decision was applied: the repair is <strong class="receipt-decision">${receipt.data.status}</strong>.</p>
<dl class="incident-facts">
<dt>Approval record</dt><dd><code>${receipt.data.approvalRecordId}</code></dd>
<dt>Recorded</dt><dd>${localTime(receipt.completedAt)}</dd>
</dl>
${back}`;
  }
  const { preview } = data.operation;
  const { review } = preview;
  const expired = preview.status === 'expired';
  return html`<p>Your decision on repair <code>${data.proposalId}</code>: <strong class="review-decision" data-decision="${review.decision}">${review.decision === 'approved' ? 'approve it' : 'reject it'}</strong>.</p>
<dl class="incident-facts review-facts">
<dt>Decision</dt><dd>${review.decision === 'approved' ? 'Approve' : 'Reject'}</dd>
<dt>Rationale</dt><dd class="review-rationale">${review.rationale}</dd>
<dt>Proposal fingerprint</dt><dd><code>${review.proposalFingerprint}</code></dd>
<dt>Candidate fingerprint</dt><dd><code>${review.patchArtifactFingerprint ?? '—'}</code></dd>
${review.validation ? html`<dt>Replay run</dt><dd><code>${review.validation.replayRunId}</code> (${review.validation.replayStatus})</dd>` : null}
<dt>Approval fingerprint</dt><dd><code class="approval-fingerprint">${preview.approvalFingerprint}</code></dd>
<dt>Expires</dt><dd>${localTime(preview.expiresAt)}</dd>
</dl>
${
  expired
    ? html`<p class="failure">This review expired ten minutes after it was made. Go back to the repair and review the decision again.</p>`
    : data.active
      ? applyForm(data, preview.approvalFingerprint, preview.operationId)
      : html`<p class="hint">This workspace is archived: the decision cannot be applied.</p>`
}
${back}`;
}
