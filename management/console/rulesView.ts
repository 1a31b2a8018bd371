import type { ExpectedOutcomesView } from '../rules/console/consoleRuleService.js';
import { errorTemplate, fieldError, fieldErrorId, formError } from './consoleForm.js';
import { html, type SafeHtml } from './html.js';
import type { ConsolePageParts } from './contractsView.js';
import { ruleFormErrors } from './rulesWords.js';

/** Where the console shows a connection's reconciliation rules. */
export const rulesPagePath = (slug: string, connectionId: string) =>
  `/console/workspaces/${encodeURIComponent(slug)}/integrations/${encodeURIComponent(connectionId)}/rules`;
/** The session route the forms post to (02 Console rule routes). */
const rulesRoute = (slug: string, connectionId: string) =>
  `/workspaces/${encodeURIComponent(slug)}/integrations/${encodeURIComponent(connectionId)}/expected-outcomes`;

/** A delay in words: whole hours, minutes or seconds. */
export function delayInWords(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

function ruleRow(view: ExpectedOutcomesView, slug: string, rule: ExpectedOutcomesView['expectedOutcomes'][number]): SafeHtml {
  const remove = view.managementPermission
    ? html`<form class="inline" id="delete-${rule.id}" data-api="DELETE ${rulesRoute(slug, view.connectionId)}/${encodeURIComponent(rule.id)}" data-idempotent>
<input type="hidden" name="expectedRevision" value="${view.revision}">
<button type="submit" aria-label="Remove the rule for ${rule.sourceEventType}">Remove</button>
${formError(`delete-${rule.id}`)}
</form>`
    : null;
  return html`<tr data-rule="${rule.id}">
<td><code>${rule.sourceEventType}</code></td>
<td><code>${rule.expectedObjectType}</code></td>
<td>${delayInWords(rule.maxDelayMs)}</td>
<td>${rule.enabled ? 'On' : 'Off'}</td>
<td>${remove}</td>
</tr>`;
}

function createForm(view: ExpectedOutcomesView, slug: string): SafeHtml {
  if (!view.managementPermission) {
    return html`<p class="hint" id="read-only">These rules can be read, not changed: the workspace is archived or not yet in Sandbox and Live.</p>`;
  }
  return html`<h2 id="create-heading">Add a rule</h2>
<form id="rule-create" class="stack" data-api="POST ${rulesRoute(slug, view.connectionId)}" data-idempotent aria-labelledby="create-heading">
<input type="hidden" name="expectedRevision" value="${view.revision}">
<label for="sourceEventType">When this event arrives</label>
<input id="sourceEventType" name="sourceEventType" type="text" required maxlength="120" pattern="[A-Za-z0-9._:\\-]+" autocomplete="off" placeholder="order.paid" aria-describedby="${fieldErrorId('rule-create', 'sourceEventType')}">
${fieldError('rule-create', 'sourceEventType')}
<label for="expectedObjectType">Expect this object</label>
<input id="expectedObjectType" name="expectedObjectType" type="text" required maxlength="120" pattern="[A-Za-z0-9._:\\-]+" autocomplete="off" placeholder="shipment">
<label for="maxDelayMs">Within (seconds)</label>
<input id="maxDelayMs" name="maxDelayMs" type="number" required min="1" max="86400" step="1" value="3600" data-type="integer" data-scale="1000">
<label class="check"><input id="enabled" name="enabled" type="checkbox"> Watch it now (a rule is off until enabled)</label>
${formError('rule-create')}
<button type="submit" class="primary">Add the rule</button>
${errorTemplate(ruleFormErrors())}
</form>`;
}

/** GET /console/workspaces/{slug}/integrations/{connectionId}/rules */
export function renderRulesPage(view: ExpectedOutcomesView, slug: string): ConsolePageParts {
  const title = `Reconciliation rules of ${view.integrationName}`;
  const next = view.nextCursor
    ? html`<p><a href="${rulesPagePath(slug, view.connectionId)}?cursor=${encodeURIComponent(view.nextCursor)}">More rules</a></p>`
    : null;
  return {
    title,
    body: html`<p>Connection <code class="connection-id">${view.connectionId}</code> (${view.mode === 'live' ? 'Live' : 'Sandbox'}), revision <code class="revision">${view.revision}</code>.</p>
${
  view.expectedOutcomes.length === 0
    ? html`<p id="no-rules">No rule yet: add one below.</p>`
    : html`<div class="table-scroll"><table id="rules">
<caption>When an event arrives, the object expected and how soon</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Expected object</th><th scope="col">Within</th><th scope="col">Enabled</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>${view.expectedOutcomes.map((rule) => ruleRow(view, slug, rule))}</tbody>
</table></div>${view.managementPermission ? errorTemplate(ruleFormErrors(), { shared: true }) : null}`
}
${next}
${createForm(view, slug)}`,
  };
}
