import type { FindingView, IncidentView } from '../incidents/incidentStore.js';
import { localTime, pager } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';
import { type IncidentPageData, type IncidentsPageData, titleOf } from './incidentsPage.js';
import { workspacePagePath } from './layout.js';
import { incidentRepairsSection } from './repairsView.js';

const FINDING_WORDS: Record<string, string> = {
  undeclared_field: 'Undeclared field',
  required_field_missing: 'Required field missing',
  type_mismatch: 'Type mismatch',
  unknown_operation: 'Unknown operation',
  transport_error: 'Transport error',
  expected_outcome_missing: 'Expected outcome missing',
};

const modeName = (mode: string) => (mode === 'live' ? 'Live' : 'Sandbox');

function incidentHref(slug: string, connectionId: string, incidentId: string): string {
  return workspacePagePath(slug, `incidents/${encodeURIComponent(incidentId)}?integration=${encodeURIComponent(connectionId)}`);
}

function listHref(slug: string, connectionId: string, status: string | null): string {
  const query = new URLSearchParams({ integration: connectionId });
  if (status) query.set('status', status);
  return workspacePagePath(slug, `incidents?${query.toString()}`);
}

function incidentRow(slug: string, connectionId: string, incident: IncidentView): SafeHtml {
  return html`<tr class="incident" data-incident="${incident.id}">
<td><a href="${incidentHref(slug, connectionId, incident.id)}">${titleOf(incident.kind)}</a></td>
<td><code>${incident.operationKey}</code></td>
<td class="status-${incident.status}">${incident.status}</td>
<td class="number">${incident.affectedRecords}</td>
<td>${localTime(incident.lastObservedAt)}</td>
</tr>`;
}

function statusFilter(slug: string, connectionId: string, current: string | null): SafeHtml {
  const option = (status: string | null, label: string) =>
    html`<a href="${listHref(slug, connectionId, status)}"${status === current ? html` aria-current="page"` : null}>${label}</a>`;
  return html`<p class="filters">Show: ${option(null, 'All')} ${option('open', 'Open')} ${option('resolved', 'Resolved')}</p>`;
}

/** The incidents page without a connection: incidents are read per connection (03 Evidence reads). */
export function chooseConnectionBody(slug: string): SafeHtml {
  return html`<p>Incidents are kept per connection. Open a connection's Incidents link on the <a href="${workspacePagePath(slug, 'integrations')}">Integrations</a> page.</p>`;
}

/** A connection's incidents, one page. */
export function incidentsBody(data: IncidentsPageData): SafeHtml {
  const { slug } = data.workspace;
  const { page, connectionId, query } = data;
  const status = query.status ?? null;
  const table =
    page.items.length === 0
      ? html`<p class="empty">No incidents${status ? ` ${status}` : ''}.</p>`
      : html`<div class="table-scroll"><table class="incidents">
<thead><tr><th scope="col">Incident</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col" class="number">Affected records</th><th scope="col">Last observed</th></tr></thead>
<tbody>${page.items.map((incident) => incidentRow(slug, connectionId, incident))}</tbody>
</table></div>`;
  return html`<p class="hint">Connection <code class="connection-id">${connectionId}</code> (${modeName(page.mode)})</p>
${statusFilter(slug, connectionId, status)}
${table}
${pager(workspacePagePath(slug, 'incidents'), { integration: connectionId, status: query.status, cursor: query.cursor }, page.nextCursor)}`;
}

function findingRow(finding: FindingView): SafeHtml {
  return html`<tr class="finding" data-kind="${finding.kind}">
<td>${FINDING_WORDS[finding.kind] ?? finding.kind}${finding.forbidden ? html` <span class="tag">forbidden by the schema</span>` : null}</td>
<td><code class="finding-path">${finding.path || '/'}</code></td>
<td><code>${finding.expected}</code></td>
<td><code>${finding.observed}</code></td>
<td class="number">${finding.observationCount}</td>
<td>${localTime(finding.lastObservedAt)}</td>
</tr>`;
}

/** One incident: what it is, its findings, its evidence and its repairs. */
export function incidentBody(data: IncidentPageData): SafeHtml {
  const { slug } = data.workspace;
  const { incident, connectionId } = data;
  return html`<p><a href="${listHref(slug, connectionId, null)}">All incidents of this connection</a></p>
<p class="summary">${incident.summary}</p>
<dl class="incident-facts">
<dt>Incident</dt><dd><code>${incident.id}</code></dd>
<dt>Operation</dt><dd><code>${incident.operationKey}</code></dd>
<dt>Status</dt><dd class="status-${incident.status}">${incident.status}${incident.resolutionState === 'resolved_by_contract' ? ' (resolved by a newer contract)' : ''}</dd>
<dt>Affected records</dt><dd class="affected-records">${incident.affectedRecords}</dd>
<dt>Connection</dt><dd><code>${incident.connectionId}</code> (${modeName(incident.mode)})</dd>
<dt>First observed</dt><dd>${localTime(incident.firstObservedAt)}</dd>
<dt>Last observed</dt><dd>${localTime(incident.lastObservedAt)}</dd>
${incident.resolvedAt ? html`<dt>Resolved</dt><dd>${localTime(incident.resolvedAt)}</dd>` : null}
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
<ul class="evidence">${incident.observationIds.map((id) => html`<li><code>${id}</code></li>`)}</ul>
${incidentRepairsSection({
  slug,
  connectionId,
  incidentId: incident.id,
  incidentOpen: incident.status === 'open',
  proposals: data.proposals,
  canAct: data.workspace.status === 'active',
})}`;
}
