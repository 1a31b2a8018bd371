import type { FindingView, IncidentView } from '../incidents/incidentStore.js';
import { timeOf, workspaceNav } from './consoleWorkspace.js';
import { html, type SafeHtml } from './html.js';
import type { IncidentPageData, IncidentsPageData } from './incidentsPage.js';
import { layout } from './layout.js';

const KIND_WORDS: Record<IncidentView['kind'], string> = {
  'schema-drift': 'Schema drift',
  'unknown-operation': 'Unknown operation',
  'transport-errors': 'Transport errors',
  'expected-outcome-missing': 'Expected outcome missing',
};

const FINDING_WORDS: Record<string, string> = {
  undeclared_field: 'Undeclared field',
  required_field_missing: 'Required field missing',
  type_mismatch: 'Type mismatch',
  unknown_operation: 'Unknown operation',
  transport_error: 'Transport error',
  expected_outcome_missing: 'Expected outcome missing',
};

function incidentHref(slug: string, connectionId: string, incidentId: string): string {
  return `/console/${slug}/incidents/${encodeURIComponent(incidentId)}?integration=${encodeURIComponent(connectionId)}`;
}

function listHref(slug: string, connectionId: string, status: string | null, cursor?: string): string {
  const query = new URLSearchParams({ integration: connectionId });
  if (status) query.set('status', status);
  if (cursor) query.set('cursor', cursor);
  return `/console/${slug}/incidents?${query.toString()}`;
}

function incidentRow(slug: string, connectionId: string, incident: IncidentView): SafeHtml {
  return html`<tr class="incident" data-incident="${incident.id}">
<td><a href="${incidentHref(slug, connectionId, incident.id)}">${KIND_WORDS[incident.kind] ?? incident.kind}</a></td>
<td><code>${incident.operationKey}</code></td>
<td class="status-${incident.status}">${incident.status}</td>
<td class="number">${incident.affectedRecords}</td>
<td>${timeOf(incident.lastObservedAt)}</td>
</tr>`;
}

function statusFilter(slug: string, connectionId: string, current: string | null): SafeHtml {
  const option = (status: string | null, label: string) =>
    status === current
      ? html`<a href="${listHref(slug, connectionId, status)}" aria-current="page">${label}</a>`
      : html`<a href="${listHref(slug, connectionId, status)}">${label}</a>`;
  return html`<p class="filters">Show: ${option(null, 'All')} ${option('open', 'Open')} ${option('resolved', 'Resolved')}</p>`;
}

/** A connection's incidents, one page. */
export function renderIncidentsPage(data: IncidentsPageData): string {
  const { slug } = data.workspace;
  const { page, connectionId, status } = data;
  const table =
    page.items.length === 0
      ? html`<p class="empty">No incidents${status ? html` ${status === 'open' ? 'open' : 'resolved'}` : null}.</p>`
      : html`<div class="table-scroll"><table class="incidents">
<thead><tr><th scope="col">Incident</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col" class="number">Affected records</th><th scope="col">Last observed</th></tr></thead>
<tbody>${page.items.map((incident) => incidentRow(slug, connectionId, incident))}</tbody>
</table></div>`;
  return layout({
    title: 'Incidents',
    body: html`${workspaceNav(slug, 'incidents')}
<h1>Incidents</h1>
<p class="hint">Connection <code class="connection-id">${connectionId}</code> (${page.mode === 'live' ? 'Live' : 'Sandbox'})</p>
${statusFilter(slug, connectionId, status)}
${table}
${page.nextCursor ? html`<p class="pager"><a rel="next" href="${listHref(slug, connectionId, status, page.nextCursor)}">Older incidents</a></p>` : null}`,
  });
}

function findingRow(finding: FindingView): SafeHtml {
  return html`<tr class="finding" data-kind="${finding.kind}">
<td>${FINDING_WORDS[finding.kind] ?? finding.kind}${finding.forbidden ? html` <span class="tag">forbidden by the schema</span>` : null}</td>
<td><code class="finding-path">${finding.path || '/'}</code></td>
<td><code>${finding.expected}</code></td>
<td><code>${finding.observed}</code></td>
<td class="number">${finding.observationCount}</td>
<td>${timeOf(finding.lastObservedAt)}</td>
</tr>`;
}

/** One incident: what it is, its findings and its evidence. */
export function renderIncidentPage(data: IncidentPageData): string {
  const { slug } = data.workspace;
  const { incident, connectionId } = data;
  const title = KIND_WORDS[incident.kind] ?? incident.kind;
  return layout({
    title: `${title} incident`,
    body: html`${workspaceNav(slug, 'incidents')}
<p><a href="${listHref(slug, connectionId, null)}">All incidents of this connection</a></p>
<h1>${title}</h1>
<p class="summary">${incident.summary}</p>
<dl class="incident-facts">
<dt>Incident</dt><dd><code>${incident.id}</code></dd>
<dt>Operation</dt><dd><code>${incident.operationKey}</code></dd>
<dt>Status</dt><dd class="status-${incident.status}">${incident.status}${incident.resolutionState === 'resolved_by_contract' ? ' (resolved by a newer contract)' : ''}</dd>
<dt>Affected records</dt><dd class="affected-records">${incident.affectedRecords}</dd>
<dt>Connection</dt><dd><code>${incident.connectionId}</code> (${incident.mode === 'live' ? 'Live' : 'Sandbox'})</dd>
<dt>First observed</dt><dd>${timeOf(incident.firstObservedAt)}</dd>
<dt>Last observed</dt><dd>${timeOf(incident.lastObservedAt)}</dd>
${incident.resolvedAt ? html`<dt>Resolved</dt><dd>${timeOf(incident.resolvedAt)}</dd>` : null}
</dl>
<h2>Findings</h2>
${
  incident.findings.length === 0
    ? html`<p class="empty">No findings recorded.</p>`
    : html`<div class="table-scroll"><table class="findings">
<thead><tr><th scope="col">Finding</th><th scope="col">Path</th><th scope="col">Expected</th><th scope="col">Observed</th><th scope="col" class="number">Observations</th><th scope="col">Last seen</th></tr></thead>
<tbody>${incident.findings.map(findingRow)}</tbody>
</table></div>`
}
<h2>Evidence</h2>
<p class="hint">The observations this incident was found in${incident.evidenceTruncated ? ' (the first ones: the list is cut)' : ''}.</p>
<ul class="evidence">${incident.observationIds.map((id) => html`<li><code>${id}</code></li>`)}</ul>`,
  });
}
