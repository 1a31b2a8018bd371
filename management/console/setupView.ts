// The second-mode setup pages (02 "Second-mode setup"): the selection that a preview posts, then
// the review (snapshot, fingerprint, Apply), the new connection's token shown once, and the
// credential-free receipt a completed setup reads as.

import { otherMode } from '../connectionSetup/setupService.js';
import type { SetupSnapshot } from '../connectionSetup/setupSnapshot.js';
import type { SetupReceipt, SetupReviewView } from '../connectionSetup/setupViews.js';
import { errorTemplate, formError } from './consoleForm.js';
import { html, type SafeHtml } from './html.js';
import { workspacePagePath } from './layout.js';
import {
  applyForm,
  artifactCount,
  fingerprintFacts,
  MODE_NAMES,
  mappingTables,
  proofFacts,
  reviewStatus,
  selectionTables,
  snapshotView,
} from './reviewSnapshotView.js';
import type { SetupPageData } from './setupData.js';
import { setupCopyFormErrors } from './setupWords.js';

/** The setup page of an Integration's `mode` slot. */
export const setupPagePath = (slug: string, integrationId: string, mode: string, again?: { contracts: string[]; rules: string[] }) => {
  const query = new URLSearchParams({ mode });
  if (again?.contracts.length) query.set('contracts', again.contracts.join(','));
  if (again?.rules.length) query.set('rules', again.rules.join(','));
  return workspacePagePath(slug, `integrations/${encodeURIComponent(integrationId)}/setup?${query}`);
};
/** A setup review's page (its operation id: `consetup_…`). */
export const setupReviewPath = (slug: string, operationId: string) =>
  workspacePagePath(slug, `connection-setup/${encodeURIComponent(operationId)}`);
const sessionRoute = (slug: string, path: string) => `/workspaces/${encodeURIComponent(slug)}/${path}`;

/** GET …/integrations/{workspaceIntegrationId}/setup: what the new connection starts with, then Preview. */
export function setupPageBody(data: SetupPageData): { title: string; body: SafeHtml } {
  const { integration, workspace, mode } = data;
  const name = MODE_NAMES[mode];
  const title = `Set up ${name} for ${integration.name}`;
  const back = html`<p><a href="${workspacePagePath(workspace.slug, 'integrations')}">Back to Integrations</a></p>`;
  const slot = integration.connections[mode];
  if (slot.status === 'configured') {
    const copy = data.source
      ? html` <a href="${workspacePagePath(workspace.slug, `connections/${encodeURIComponent(slot.connectionId)}/configuration-copy?source=${encodeURIComponent(data.source.connectionId)}`)}">Copy configuration to ${name}</a> instead.`
      : null;
    return {
      title,
      body: html`<p id="already-configured">This Integration already has a ${name} connection (<code>${slot.connectionId}</code>).${copy}</p>${back}`,
    };
  }
  if (workspace.status !== 'active') {
    return { title, body: html`<p>This workspace is archived: nothing can be set up in it. Restore it first.</p>${back}` };
  }
  const id = 'setup-preview';
  const sourceName = MODE_NAMES[data.source?.mode ?? 'sandbox'];
  const choices = data.source
    ? html`<p>It can start with copies of ${sourceName}'s contract versions and rules (connection <code>${data.source.connectionId}</code>): choose them below, or none to start empty.</p>
<input type="hidden" name="sourceConnectionId" value="${data.source.connectionId}">
${selectionTables(id, sourceName, data.artifacts, data.preselected)}`
    : html`<p>This Integration has no other connection to copy from: the new connection starts empty.</p>`;
  return {
    title,
    body: html`<p>Setting up ${name} creates the ${name} connection of <strong>${integration.name}</strong> (${integration.provider} · ${integration.direction} · ${integration.protocol}), with an ingest token of its own that is shown once. It copies no credential, evidence or history, activates no contract and turns no rule on.</p>
<form id="${id}" class="stack" data-api="POST ${sessionRoute(workspace.slug, `integrations/${encodeURIComponent(integration.id)}/connections/preview`)}"
 data-next="${workspacePagePath(workspace.slug, 'connection-setup/{operationId}')}">
<input type="hidden" name="destinationMode" value="${mode}">
${choices}
<p class="hint">Preview makes a review of exactly this, valid for ten minutes; nothing is created until you apply it.</p>
<div class="actions"><button type="submit" class="primary">Preview</button></div>
${formError(id)}
${errorTemplate(setupCopyFormErrors(id))}
</form>
${back}`,
  };
}

/** A setup status read as the page renders it: a review, or the completed receipt. */
export type SetupStatus = SetupReviewView | (SetupReceipt & { replayed: boolean; historical: boolean });

function tokenOnce(): SafeHtml {
  return html`<section id="setup-applied" class="outcome token" role="status" hidden>
<h2 tabindex="-1">Connection created</h2>
<p>Connection <code class="new-connection-id" data-result="connectionId"></code> is set up.</p>
<p>Copy its ingest token now: it is shown this once and cannot be shown again. A lost token needs a rotation.</p>
<p class="secret"><code id="setup-token" class="token-value" data-result="collectorConfiguration.ingestToken"></code></p>
<div class="actions"><button type="button" data-copy="#setup-token" data-copied="Copied">Copy</button></div>
<p>The collector configuration, for your application's environment:</p>
<pre class="snippet" id="setup-snippet">INTEGRATION_KEY=<span data-result="collectorConfiguration.integrationKey"></span>
CONNECTION_KEY=<span data-result="collectorConfiguration.connectionKey"></span>
INGEST_TOKEN=<span data-result="collectorConfiguration.ingestToken"></span></pre>
<div class="actions"><button type="button" data-copy="#setup-snippet" data-copied="Copied">Copy configuration</button> <a href="">Done</a></div>
</section>`;
}

function reviewBody(slug: string, review: SetupReviewView): SafeHtml {
  const snapshot: SetupSnapshot = review.snapshot;
  const again = setupPagePath(slug, review.workspaceIntegrationId, review.mode, {
    contracts: snapshot.contracts.map((contract) => contract.sourceContractVersionId),
    rules: snapshot.rules.map((rule) => rule.sourceRuleId),
  });
  const action =
    review.status === 'expired'
      ? html`<p><a class="preview-again" href="${again}">Preview again</a></p>`
      : html`${applyForm({
          form: 'setup-apply',
          route: `/workspaces/${encodeURIComponent(slug)}/connection-setup/${encodeURIComponent(review.operationId)}/apply`,
          approvalFingerprint: review.fingerprint,
          label: `Apply: set up ${MODE_NAMES[review.mode]}`,
          show: '#setup-applied',
        })}
${tokenOnce()}`;
  const source = snapshot.source ? `copies ${artifactCount(snapshot)} from ${MODE_NAMES[otherMode(review.mode)]}` : 'starts empty';
  return html`${reviewStatus(review.status, review.expiresAt, 'nothing was created')}
<p class="summary">Applying creates the ${MODE_NAMES[review.mode]} connection of <strong>${snapshot.identity.name}</strong> with an ingest token of its own, shown once; it ${source}.</p>
<p class="hint">Review <code class="operation-id">${review.operationId}</code></p>
${snapshotView(snapshot)}
<h2>Approval</h2>
${fingerprintFacts(review.fingerprint, snapshot.fingerprint)}
${action}`;
}

function receiptBody(slug: string, receipt: SetupReceipt & { historical: boolean }): SafeHtml {
  const connection = encodeURIComponent(receipt.connectionId);
  return html`<p class="review-status" data-status="completed">Applied: the ${MODE_NAMES[receipt.mode]} connection <code class="new-connection-id">${receipt.connectionId}</code> exists, at revision ${receipt.revision}.</p>
<p class="hint">Review <code class="operation-id">${receipt.operationId}</code></p>
<h2>Collector configuration</h2>
<pre class="snippet" id="receipt-snippet">INTEGRATION_KEY=${receipt.collectorConfiguration.integrationKey}
CONNECTION_KEY=${receipt.collectorConfiguration.connectionKey}</pre>
<p class="hint">The ingest token was shown once, when this setup was applied. If it was lost, rotate the credential on the Integrations page.</p>
<h2>Copied</h2>
${mappingTables(receipt.copiedArtifacts, 'Created')}
<p class="links"><a href="${workspacePagePath(slug, `integrations/${connection}/contracts`)}">Its contracts</a>
 <a href="${workspacePagePath(slug, `integrations/${connection}/rules`)}">Its rules</a>
 <a href="${workspacePagePath(slug, 'integrations')}">Integrations</a></p>
<h2>Receipt</h2>
${proofFacts(receipt.proof, receipt.completedAt, receipt.historical)}`;
}

/** GET …/connection-setup/{operationId}: the pending or expired review, or the completed receipt. */
export function setupReviewBody(slug: string, status: SetupStatus): { title: string; body: SafeHtml } {
  const mode = MODE_NAMES[status.mode];
  if (status.status === 'completed') return { title: `${mode} set up`, body: receiptBody(slug, status) };
  return { title: `Review: set up ${mode} for ${status.snapshot.identity.name}`, body: reviewBody(slug, status) };
}
