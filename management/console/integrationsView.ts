import type { ConfiguredSlot, MissingSlot } from '../integrations/integrationStore.js';
import { errorTemplate, formError } from './consoleForm.js';
import { localTime, pager } from './consoleRoute.js';
import { CREDENTIAL_FORM_ERRORS } from './credentialWords.js';
import { html, type SafeHtml } from './html.js';
import { integrationCreateSection } from './integrationCreateView.js';
import type { ConsoleIntegration, IntegrationsPageData } from './integrationsPage.js';
import { workspacePagePath } from './layout.js';
import { MODE_NAMES } from './reviewSnapshotView.js';

const OBSERVATION_WORDS: Record<ConfiguredSlot['observationState'], string> = {
  waiting_for_observation: 'Waiting for the first observation',
  observed: 'Observed (traffic accepted)',
  incident_open: 'Incident open',
};

const CREDENTIAL_STATUS_WORDS: Record<ConfiguredSlot['credentialStatus'], string> = {
  not_issued: 'not issued',
  active: 'active',
  revoked: 'revoked',
};

const ACTION_LABELS = { issue: 'Issue credential', rotate: 'Rotate', revoke: 'Revoke' } as const;

/** One credential action of a slot: a form posting the reviewed revision to the session route. */
function actionForm(slug: string, slot: ConfiguredSlot, action: keyof typeof ACTION_LABELS): SafeHtml {
  const id = `${action}-${slot.connectionId}`;
  const shows = action === 'revoke' ? null : html` data-show="#token-${slot.connectionId}"`;
  return html`<form id="${id}" class="inline credential-action" data-action="${action}" data-idempotent
 data-api="POST /workspaces/${slug}/connections/${slot.connectionId}/credentials/${action}"${shows}>
<input type="hidden" name="expectedRevision" value="${slot.revision}">
<button type="submit"${action === 'issue' ? html` class="primary"` : null}>${ACTION_LABELS[action]}</button>
${formError(id)}
${errorTemplate(CREDENTIAL_FORM_ERRORS)}
</form>`;
}

/**
 * A slot's credential: its status, the actions the status allows, and the section the script
 * fills with a new token (shown once: the page never has it again) and the collector configuration.
 */
function credential(slug: string, integration: ConsoleIntegration, slot: ConfiguredSlot): SafeHtml {
  const active = slot.credentialStatus === 'active';
  const id = slot.connectionId;
  return html`<div class="credential">
<p>Credential: <strong class="credential-status">${CREDENTIAL_STATUS_WORDS[slot.credentialStatus]}</strong></p>
<div class="actions">${active ? [actionForm(slug, slot, 'rotate'), actionForm(slug, slot, 'revoke')] : actionForm(slug, slot, 'issue')}</div>
<section id="token-${id}" class="outcome token" role="status" hidden>
<h3 tabindex="-1">New ingest token</h3>
<p>Copy it now: it is shown this once and cannot be shown again. A lost token needs a rotation.</p>
<p class="secret"><code id="token-value-${id}" class="token-value" data-result="ingestToken"></code></p>
<div class="actions"><button type="button" data-copy="#token-value-${id}" data-copied="Copied">Copy</button></div>
<p>The collector configuration, for your application's environment:</p>
<pre class="snippet" id="snippet-${id}">INTEGRATION_KEY=${integration.integrationKey}
CONNECTION_KEY=<span data-result="connectionKey"></span>
INGEST_TOKEN=<span data-result="ingestToken"></span></pre>
<div class="actions"><button type="button" data-copy="#snippet-${id}" data-copied="Copied">Copy configuration</button> <a href="">Done</a></div>
</section>
</div>`;
}

/**
 * What a slot offers for the other mode (02 "Second-mode setup", "Configuration copy"): a missing
 * slot is set up from its own card; a configured one copies its configuration to the other slot
 * when both exist. Nothing in an archived workspace, where neither can be previewed.
 */
function secondModeLink(
  slug: string,
  integration: ConsoleIntegration,
  slot: ConfiguredSlot | MissingSlot,
  writable: boolean,
): SafeHtml | null {
  if (!writable) return null;
  const name = MODE_NAMES[slot.mode];
  if (slot.status === 'not_configured') {
    const setup = workspacePagePath(slug, `integrations/${encodeURIComponent(integration.id)}/setup?mode=${slot.mode}`);
    return html`<p class="links"><a class="set-up" href="${setup}">Set up ${name}</a></p>`;
  }
  const other = integration.connections[slot.mode === 'sandbox' ? 'live' : 'sandbox'];
  if (other.status !== 'configured') return null;
  const copy = workspacePagePath(
    slug,
    `connections/${encodeURIComponent(other.connectionId)}/configuration-copy?source=${encodeURIComponent(slot.connectionId)}`,
  );
  return html`<p class="links"><a class="copy-configuration" href="${copy}">Copy configuration to ${MODE_NAMES[other.mode]}</a></p>`;
}

function slotCard(slug: string, integration: ConsoleIntegration, slot: ConfiguredSlot | MissingSlot, writable: boolean): SafeHtml {
  const name = MODE_NAMES[slot.mode];
  if (slot.status === 'not_configured') {
    return html`<section class="slot not-configured" data-mode="${slot.mode}"><h3>${name}</h3><p class="hint">Not configured.</p>${secondModeLink(slug, integration, slot, writable)}</section>`;
  }
  const connection = encodeURIComponent(slot.connectionId);
  return html`<section class="slot" data-mode="${slot.mode}" data-connection="${slot.connectionId}">
<h3>${name} <code class="connection-id">${slot.connectionId}</code></h3>
<dl>
<dt>Observation state</dt><dd class="observation-state" data-state="${slot.observationState}">${OBSERVATION_WORDS[slot.observationState]}</dd>
<dt>Last observation</dt><dd>${slot.latestObservationAt ? localTime(slot.latestObservationAt) : html`<span class="none">never</span>`}</dd>
<dt>Open incidents</dt><dd class="open-incidents">${slot.openIncidentCount}</dd>
<dt>Active contract</dt><dd>${slot.activeContractVersionId ? html`<code>${slot.activeContractVersionId}</code>` : html`<span class="none">none</span>`}</dd>
</dl>
<p class="links"><a href="${workspacePagePath(slug, `incidents?integration=${connection}`)}">Incidents</a>
 <a href="${workspacePagePath(slug, `connections/${connection}/coverage`)}">Field coverage</a>
 <a href="${workspacePagePath(slug, `usage?integration=${connection}`)}">Usage</a>
 <a href="${workspacePagePath(slug, `integrations/${connection}/contracts`)}">Contracts</a>
 <a href="${workspacePagePath(slug, `integrations/${connection}/rules`)}">Rules</a></p>
${credential(slug, integration, slot)}
${secondModeLink(slug, integration, slot, writable)}
</section>`;
}

function integrationCard(slug: string, integration: ConsoleIntegration, writable: boolean): SafeHtml {
  return html`<article class="integration" id="${integration.id}">
<h2>${integration.name}</h2>
<p class="hint">${integration.provider} · ${integration.direction} · ${integration.protocol} · <code>${integration.id}</code></p>
<p class="hint">Integration key: <code class="integration-key">${integration.integrationKey}</code></p>
<div class="slots">${slotCard(slug, integration, integration.connections.sandbox, writable)}${slotCard(slug, integration, integration.connections.live, writable)}</div>
</article>`;
}

/** The Integrations page's content. */
export function integrationsBody(data: IntegrationsPageData): SafeHtml {
  const { slug } = data.workspace;
  return html`${data.workspace.status === 'archived' ? html`<p class="hint">This workspace is archived: its credentials cannot change.</p>` : null}
${data.integrations.length === 0 ? html`<p id="no-integrations">No Integrations yet: add the first one below.</p>` : data.integrations.map((integration) => integrationCard(slug, integration, data.workspace.status === 'active'))}
${pager(workspacePagePath(slug, 'integrations'), { cursor: data.cursor }, data.nextCursor)}
${data.workspace.status === 'archived' ? null : integrationCreateSection(slug)}`;
}
