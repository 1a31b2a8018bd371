import type { BreakingChange } from '../../shared/contracts/breakingChanges.js';
import type { ContractVersionView } from '../contracts/contractViews.js';
import { type ActivationReviewData, type ContractsPageData, activationMove } from './contractsData.js';
import { localTime } from './consoleRoute.js';
import { errorTemplate, fieldError, fieldErrorId, formError } from './consoleForm.js';
import { contractFormErrors } from './contractWords.js';
import { html, type SafeHtml } from './html.js';

/** Where the console shows a connection's contracts, and one version's activation review. */
export const contractsPagePath = (slug: string, connectionId: string) =>
  `/console/workspaces/${encodeURIComponent(slug)}/integrations/${encodeURIComponent(connectionId)}/contracts`;
export const versionPagePath = (slug: string, connectionId: string, versionId: string) =>
  `${contractsPagePath(slug, connectionId)}/${encodeURIComponent(versionId)}`;
/** The session routes the forms post to (management/contracts/console/). */
const contractsRoute = (slug: string, connectionId: string) =>
  `/workspaces/${encodeURIComponent(slug)}/integrations/${encodeURIComponent(connectionId)}/contracts`;

const STATUS_WORDS: Record<ContractVersionView['lifecycleStatus'], string> = {
  draft: 'Draft',
  active: 'Active',
  superseded: 'Superseded',
};

const CHANGE_WORDS: Record<BreakingChange['kind'], string> = {
  operation_removed: 'Operation removed',
  field_removed: 'Field removed',
  field_newly_required: 'Field now required',
  type_narrowed: 'Type narrowed',
};

function breakingList(changes: readonly BreakingChange[]): SafeHtml {
  if (changes.length === 0)
    return html`<p class="hint" id="breaking-none">No breaking change: everything the active version accepts, this version accepts too.</p>`;
  const items = changes.map((change) => {
    const where = change.kind === 'operation_removed' ? null : html` <code class="change-path">${change.path}</code>`;
    const narrowed = change.kind === 'type_narrowed' ? html`: <code>${change.from}</code> → <code>${change.to}</code>` : null;
    return html`<li data-kind="${change.kind}"><strong>${CHANGE_WORDS[change.kind]}</strong>${where}${narrowed} <span class="hint">in <code>${change.operationKey}</code></span></li>`;
  });
  return html`<ul class="breaking" id="breaking-changes">${items}</ul>`;
}

function breakingSummary(changes: BreakingChange[] | null): SafeHtml | string {
  if (changes === null) return '—';
  if (changes.length === 0) return 'None';
  return html`<strong class="breaking-count">${changes.length} breaking ${changes.length === 1 ? 'change' : 'changes'}</strong>`;
}

function versionRow(data: ContractsPageData, entry: ContractsPageData['versions'][number]): SafeHtml {
  const { version } = entry;
  const move = activationMove(version);
  const link = versionPagePath(data.workspaceSlug, data.connection.id, version.id);
  const action = move === 'promote' ? 'Review activation' : move === 'rollback' ? 'Review rollback' : 'View';
  return html`<tr data-version="${version.id}">
<td><a href="${link}">${version.declaredVersion}</a></td>
<td class="status-${version.lifecycleStatus}">${STATUS_WORDS[version.lifecycleStatus]}</td>
<td>${version.operations.length}</td>
<td>${localTime(version.createdAt)}</td>
<td>${breakingSummary(entry.breaking)}</td>
<td><a href="${link}">${action}</a></td>
</tr>`;
}

function importForm(data: ContractsPageData): SafeHtml {
  if (!data.canWrite) return html`<p class="hint">This workspace is archived: its contracts can be read, not changed.</p>`;
  return html`<h2 id="import-heading">Import a version</h2>
<form id="import" class="stack" data-api="POST ${contractsRoute(data.workspaceSlug, data.connection.id)}"
 data-next="${contractsPagePath(data.workspaceSlug, data.connection.id)}/{contract.id}" aria-labelledby="import-heading">
<input type="hidden" name="format" value="openapi">
<label for="declaredVersion">Version label</label>
<input id="declaredVersion" name="declaredVersion" type="text" required maxlength="120" autocomplete="off" aria-describedby="${fieldErrorId('import', 'declaredVersion')}">
${fieldError('import', 'declaredVersion')}
<label for="document-file">Upload an OpenAPI document (JSON)</label>
<input id="document-file" type="file" accept=".json,application/json" data-file-into="document">
<label for="document">Or paste it</label>
<textarea id="document" name="document" rows="10" required spellcheck="false" data-type="json" aria-describedby="document-hint ${fieldErrorId('import', 'document')}"></textarea>
<p class="hint" id="document-hint">An OpenAPI 3 or Swagger 2.0 document as JSON. It is imported as a draft; activating it is a separate, reviewed step.</p>
${fieldError('import', 'document')}
${formError('import')}
<button type="submit" class="primary">Import as a draft</button>
${errorTemplate(contractFormErrors('import'))}
</form>`;
}

/** A page for the console frame (consoleRoute.ts `render`): its title (the frame's heading) and body. */
export interface ConsolePageParts {
  title: string;
  body: SafeHtml;
}

/** GET /console/workspaces/{slug}/integrations/{connectionId}/contracts */
export function renderContractsPage(data: ContractsPageData): ConsolePageParts {
  const title = `Contracts of ${data.connection.name}`;
  const rows = data.versions.map((entry) => versionRow(data, entry));
  const next = data.nextCursor
    ? html`<p><a href="${contractsPagePath(data.workspaceSlug, data.connection.id)}?cursor=${encodeURIComponent(data.nextCursor)}">Older versions</a></p>`
    : null;
  return {
    title,
    body: html`<p>Connection <code class="connection-id">${data.connection.id}</code> of the workspace <code>${data.workspaceSlug}</code>.</p>
<p id="active-version">${data.active ? html`Active version: <strong>${data.active.declaredVersion}</strong> (<code>${data.active.id}</code>)` : 'No version is active yet.'}</p>
${
  rows.length === 0
    ? html`<p id="no-versions">No contract version yet: import the API's document below.</p>`
    : html`<div class="table-scroll"><table id="versions">
<caption>Versions, newest first</caption>
<thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Operations</th><th scope="col">Imported</th><th scope="col">Breaking vs active</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
${next}
${importForm(data)}`,
  };
}

function incidentItems(items: readonly { incidentId?: string; kind: string; operationKey: string; affectedRecords: number }[]): SafeHtml {
  return html`${items.map(
    (item) =>
      html`<li>${item.incidentId ? html`<code>${item.incidentId}</code> ` : null}${item.kind} on <code>${item.operationKey}</code> (${item.affectedRecords} ${item.affectedRecords === 1 ? 'record' : 'records'})</li>`,
  )}`;
}

function impactSection(data: ActivationReviewData): SafeHtml | null {
  const { impact } = data;
  if (!impact) return null;
  const n = impact.resolves.length;
  const m = impact.opens.length;
  return html`<section id="impact" aria-labelledby="impact-heading">
<h2 id="impact-heading">Impact</h2>
<p id="impact-summary">Activating would resolve <strong>${n}</strong> ${n === 1 ? 'incident' : 'incidents'}, open <strong>${m}</strong>, and leave ${impact.continues.length} open.</p>
<p class="hint">Computed over the traffic from ${localTime(impact.from)} to ${localTime(impact.to)}, as the reanalysis after activation will compute it.</p>
${n > 0 ? html`<h3>Would resolve</h3><ul id="impact-resolves">${incidentItems(impact.resolves)}</ul>` : null}
${m > 0 ? html`<h3>Would open</h3><ul id="impact-opens">${incidentItems(impact.opens)}</ul>` : null}
${impact.continues.length > 0 ? html`<h3>Would stay open</h3><ul id="impact-continues">${incidentItems(impact.continues)}</ul>` : null}
</section>`;
}

function activationForm(data: ActivationReviewData): SafeHtml | null {
  const { move, version } = data;
  if (move === null) return html`<p id="is-active">This version is the active one.</p>`;
  if (!data.canWrite) return html`<p class="hint">This workspace is archived: its contracts can be read, not changed.</p>`;
  const verb = move === 'promote' ? 'Activate' : 'Roll back to';
  const list = contractsPagePath(data.workspaceSlug, data.connectionId);
  return html`<form id="activate" class="stack" data-api="POST ${contractsRoute(data.workspaceSlug, data.connectionId)}/${encodeURIComponent(version.id)}/activate"
 data-show="#activated" data-hide-on-success>
<input type="hidden" name="expectedActiveContractVersionId" value="${data.active?.id ?? ''}" data-empty="null">
<input type="hidden" name="reason" value="${move}">
${formError('activate')}
<div class="actions"><button type="submit" class="primary">${verb} ${version.declaredVersion}</button> <a href="${list}">Back to the versions</a></div>
${errorTemplate(contractFormErrors('activate'))}
</form>
<section id="activated" class="outcome" role="status" hidden>
<h2 tabindex="-1">${move === 'promote' ? 'Activated' : 'Rolled back'}</h2>
<p><strong>${version.declaredVersion}</strong> is now the active version; the connection's traffic of the last 30 days is being analysed again under it.</p>
<p><a href="${list}">Back to the versions</a></p>
</section>`;
}

/** GET /console/workspaces/{slug}/integrations/{connectionId}/contracts/{contractVersionId} */
export function renderActivationReview(data: ActivationReviewData): ConsolePageParts {
  const { version, move } = data;
  const title =
    move === 'rollback'
      ? `Roll back to ${version.declaredVersion}?`
      : move === 'promote'
        ? `Activate ${version.declaredVersion}?`
        : `Version ${version.declaredVersion}`;
  const precondition = data.active
    ? html`Active now: <strong>${data.active.declaredVersion}</strong> (<code class="expected-active">${data.active.id}</code>). The activation applies only while it still is.`
    : html`No version is active now. The activation applies only while none is.`;
  const operations = version.operations.map((operation) => html`<li><code>${operation.operationKey}</code></li>`);
  return {
    title,
    body: html`<dl class="facts">
<dt>Version</dt><dd><code>${version.id}</code> · ${STATUS_WORDS[version.lifecycleStatus]}</dd>
<dt>Fingerprint</dt><dd><code class="fingerprint">${version.fingerprint}</code></dd>
<dt>Imported</dt><dd>${localTime(version.createdAt)}</dd>
</dl>
${move === null ? null : html`<p id="precondition">${precondition}</p>`}
${impactSection(data)}
${
  move === null || data.active === null
    ? null
    : html`<section aria-labelledby="breaking-heading"><h2 id="breaking-heading">Breaking changes against ${data.active.declaredVersion}</h2>${breakingList(data.breaking)}</section>`
}
<details><summary>${operations.length} ${operations.length === 1 ? 'operation' : 'operations'}</summary><ul>${operations}</ul></details>
${activationForm(data)}`,
  };
}
