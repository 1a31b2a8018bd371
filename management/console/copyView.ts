// The configuration copy pages (02 "Configuration copy and compensation"): the selection a copy
// preview posts, then one page per operation: a copy or reversal review (snapshot, fingerprint,
// Apply), or its completed receipt (a copy's with "Reverse this copy").

import type { ReviewView } from '../configuration/configurationService.js';
import type { CopiedArtifacts } from '../configuration/artifacts.js';
import type { Proof } from '../configuration/snapshot.js';
import type { Mode } from '../connections/connectionStore.js';
import { errorTemplate, formError } from './consoleForm.js';
import { html, type SafeHtml } from './html.js';
import { workspacePagePath } from './layout.js';
import {
  applyForm,
  artifactCount,
  buttonForm,
  fingerprintFacts,
  MODE_NAMES,
  mappingTables,
  proofFacts,
  reviewStatus,
  selectionTables,
  snapshotView,
} from './reviewSnapshotView.js';
import type { CopyPageData } from './setupData.js';
import { setupPagePath } from './setupView.js';
import { setupCopyFormErrors } from './setupWords.js';

/** The copy page into `destinationId` from `sourceId`, optionally with a selection checked again. */
export const copyPagePath = (slug: string, destinationId: string, sourceId: string, again?: { contracts: string[]; rules: string[] }) => {
  const query = new URLSearchParams({ source: sourceId });
  if (again?.contracts.length) query.set('contracts', again.contracts.join(','));
  if (again?.rules.length) query.set('rules', again.rules.join(','));
  return workspacePagePath(slug, `connections/${encodeURIComponent(destinationId)}/configuration-copy?${query}`);
};
/** A copy or reversal's page (`concopy_…` or `concomp_…`). */
export const operationPagePath = (slug: string, operationId: string) =>
  workspacePagePath(slug, `configuration-operations/${encodeURIComponent(operationId)}`);
const operationRoute = (slug: string, operationId: string) =>
  `/workspaces/${encodeURIComponent(slug)}/configuration-operations/${encodeURIComponent(operationId)}`;
/** The `data-next` of the forms whose answer is a review: its page, by the answer's `operationId`. */
const nextReview = (slug: string) => workspacePagePath(slug, 'configuration-operations/{operationId}');

const back = (slug: string) => html`<p><a href="${workspacePagePath(slug, 'integrations')}">Back to Integrations</a></p>`;

/** GET …/connections/{destinationConnectionId}/configuration-copy?source=…: the selection, then Preview. */
export function copyPageBody(data: CopyPageData): { title: string; body: SafeHtml } {
  const { workspace, integration, destination, source } = data;
  const to = MODE_NAMES[destination.mode];
  const title = `Copy configuration to ${to}`;
  if (workspace.status !== 'active') {
    return { title, body: html`<p>This workspace is archived: nothing can be copied in it. Restore it first.</p>${back(workspace.slug)}` };
  }
  if (!source) {
    const other = destination.mode === 'sandbox' ? 'live' : 'sandbox';
    const setup = setupPagePath(workspace.slug, integration.id, other);
    return {
      title,
      body: html`<p id="no-source">${integration.name} has no ${MODE_NAMES[other]} connection to copy from. <a href="${setup}">Set up ${MODE_NAMES[other]}</a>, with copies of ${to}'s configuration if you like.</p>${back(workspace.slug)}`,
    };
  }
  const from = MODE_NAMES[source.mode];
  const id = 'copy-preview';
  return {
    title,
    body: html`<p>Copies chosen contract versions and rules of <strong>${integration.name}</strong> from ${from} (<code>${source.connectionId}</code>) to ${to} (<code>${destination.connectionId}</code>): versions become drafts, rules are turned off. ${to}'s credential, active contract, evidence and history stay as they are, and later changes in ${from} are not followed.</p>
<form id="${id}" class="stack" data-api="POST /workspaces/${encodeURIComponent(workspace.slug)}/connections/${encodeURIComponent(destination.connectionId)}/configuration-copy/preview" data-next="${nextReview(workspace.slug)}">
<input type="hidden" name="sourceConnectionId" value="${source.connectionId}">
${selectionTables(id, from, data.artifacts, data.preselected, { ...data.present, destinationName: to })}
<p class="hint">Preview makes a review of exactly this, valid for ten minutes; nothing is copied until you apply it.</p>
<div class="actions"><button type="submit" class="primary">Preview</button></div>
${formError(id)}
${errorTemplate(setupCopyFormErrors(id))}
</form>
${back(workspace.slug)}`,
  };
}

/** A completed copy or reversal receipt (02 "Operation receipt (completed)"). */
export interface ConfigurationReceiptView {
  operationId: string;
  action: ReviewView['action'];
  status: 'completed';
  connectionId: string;
  workspaceIntegrationId: string;
  mode: Mode;
  revision: string;
  completedAt: string;
  originalOperationId: string | null;
  proof: Proof;
  copiedArtifacts: CopiedArtifacts;
  replayed: boolean;
  historical: boolean;
}

export type ConfigurationStatus = ReviewView | ConfigurationReceiptView;

function reviewBody(slug: string, review: ReviewView): SafeHtml {
  const copy = review.action === 'configuration.copy';
  const { snapshot } = review;
  let action: SafeHtml;
  if (review.status === 'expired') {
    action = copy
      ? html`<p><a class="preview-again" href="${copyPagePath(slug, snapshot.destination.connectionId, snapshot.source.connectionId, {
          contracts: snapshot.contracts.map((contract) => contract.sourceContractVersionId),
          rules: snapshot.rules.map((rule) => rule.sourceRuleId),
        })}">Preview again</a></p>`
      : buttonForm({
          form: 'compensation-preview',
          id: 'compensation-preview',
          route: `${operationRoute(slug, review.originalOperationId!)}/compensation-preview`,
          next: nextReview(slug),
          label: 'Preview again',
        });
  } else {
    action = applyForm({
      form: 'copy-apply',
      route: `${operationRoute(slug, review.operationId)}/apply`,
      approvalFingerprint: review.fingerprint,
      label: copy ? `Apply: copy to ${MODE_NAMES[snapshot.destination.mode]}` : 'Apply: remove what the copy created',
      next: nextReview(slug),
    });
  }
  const removal = copy
    ? null
    : html`<h2>What the reversal removes</h2>
<p>From ${MODE_NAMES[snapshot.destination.mode]}, exactly what <a href="${operationPagePath(slug, review.originalOperationId!)}">the copy</a> created, as long as none of it changed:</p>
${mappingTables(review.copiedArtifacts!, 'Will be removed')}`;
  const to = MODE_NAMES[snapshot.destination.mode];
  const summary = copy
    ? html`<p class="summary">Applying copies ${artifactCount(snapshot)} of <strong>${snapshot.identity.name}</strong> to ${to}.</p>`
    : null;
  return html`${reviewStatus(review.status, review.expiresAt, copy ? 'nothing was copied' : 'nothing was removed')}
${summary}
<p class="hint">Review <code class="operation-id">${review.operationId}</code></p>
${removal}
${snapshotView(snapshot)}
<h2>Approval</h2>
${fingerprintFacts(review.fingerprint, snapshot.fingerprint)}
${action}`;
}

function receiptBody(slug: string, receipt: ConfigurationReceiptView, writable: boolean): SafeHtml {
  const mode = MODE_NAMES[receipt.mode];
  const connection = encodeURIComponent(receipt.connectionId);
  const links = html`<p class="links"><a href="${workspacePagePath(slug, `integrations/${connection}/contracts`)}">${mode} contracts</a>
 <a href="${workspacePagePath(slug, `integrations/${connection}/rules`)}">${mode} rules</a>
 <a href="${workspacePagePath(slug, 'integrations')}">Integrations</a></p>`;
  if (receipt.action === 'configuration.compensate') {
    return html`<p class="review-status" data-status="completed">Reversed: what <a href="${operationPagePath(slug, receipt.originalOperationId!)}">the copy</a> created in ${mode} (<code>${receipt.connectionId}</code>) is removed; the connection is at revision ${receipt.revision}.</p>
<p class="hint">Operation <code class="operation-id">${receipt.operationId}</code></p>
<h2>Removed</h2>
${mappingTables(receipt.copiedArtifacts, 'Removed')}
${links}
<h2>Receipt</h2>
${proofFacts(receipt.proof, receipt.completedAt, receipt.historical)}`;
  }
  const reverse = !writable
    ? html`<p class="hint">This workspace is archived: its copies cannot be reversed. Restore it first.</p>`
    : buttonForm({
        form: 'compensation-preview',
        id: 'compensation-preview',
        route: `${operationRoute(slug, receipt.operationId)}/compensation-preview`,
        next: nextReview(slug),
        label: 'Reverse this copy',
        intro: html`<p>Reversing removes the drafts and rules this copy created, as long as ${mode} has not changed since. You review what is removed before anything is.</p>`,
      });
  return html`<p class="review-status" data-status="completed">Copied to ${mode} (<code>${receipt.connectionId}</code>): the connection is at revision ${receipt.revision}.</p>
<p class="hint">Operation <code class="operation-id">${receipt.operationId}</code></p>
<h2>Created</h2>
${mappingTables(receipt.copiedArtifacts, 'Created')}
${links}
<h2>Receipt</h2>
${proofFacts(receipt.proof, receipt.completedAt, receipt.historical)}
<h2>Reverse</h2>
${reverse}`;
}

/** GET …/configuration-operations/{operationId}: a copy or reversal review, or its receipt. */
export function operationPageBody(slug: string, status: ConfigurationStatus, writable: boolean): { title: string; body: SafeHtml } {
  const copy = status.action === 'configuration.copy';
  if (status.status === 'completed') {
    return { title: copy ? `Copied to ${MODE_NAMES[status.mode]}` : 'Copy reversed', body: receiptBody(slug, status, writable) };
  }
  const mode = MODE_NAMES[status.snapshot.destination.mode];
  return { title: copy ? `Review: copy to ${mode}` : `Review: reverse a copy to ${mode}`, body: reviewBody(slug, status) };
}
