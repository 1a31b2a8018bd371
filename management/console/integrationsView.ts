import type { ConfiguredSlot, MissingSlot } from '../integrations/integrationStore.js';
import { credentialErrorTemplate } from './credentialWords.js';
import { timeOf, workspaceNav } from './consoleWorkspace.js';
import { html, type SafeHtml } from './html.js';
import type { ConsoleIntegration, IntegrationsPageData } from './integrationsPage.js';
import { layout } from './layout.js';

const MODE_NAMES = { sandbox: 'Sandbox', live: 'Live' } as const;

const OBSERVATION_WORDS: Record<ConfiguredSlot['observationState'], string> = {
  waiting_for_observation: 'Waiting for the first observation',
  observed: 'Observed (traffic accepted)',
  incident_open: 'Incident open',
};

const CREDENTIAL_WORDS: Record<ConfiguredSlot['credentialStatus'], string> = {
  not_issued: 'not issued',
  active: 'active',
  revoked: 'revoked',
};

/** The credential actions of one configured slot: the buttons its status allows, posting to the session route. */
function credentialForm(slug: string, integration: ConsoleIntegration, slot: ConfiguredSlot): SafeHtml {
  const active = slot.credentialStatus === 'active';
  const id = `credential-${slot.connectionId}`;
  return html`<form id="${id}" class="credential" data-form="credential" method="post"
 action="/workspaces/${slug}/connections/${slot.connectionId}/credentials/" data-revision="${slot.revision}"
 data-integration-key="${integration.integrationKey}" data-mode="${slot.mode}">
<p>Credential: <strong class="credential-status">${CREDENTIAL_WORDS[slot.credentialStatus]}</strong></p>
<div class="actions">
<button type="submit" name="action" value="issue" class="primary"${active ? html` hidden` : null}>Issue credential</button>
<button type="submit" name="action" value="rotate"${active ? null : html` hidden`}>Rotate</button>
<button type="submit" name="action" value="revoke"${active ? null : html` hidden`}>Revoke</button>
</div>
<p class="error" id="${id}-error" role="alert" hidden></p>
<section class="token" hidden aria-live="polite">
<h4>New ingest token</h4>
<p class="hint">Shown once: copy it now. The service keeps no copy it can show again; a lost token needs a rotation.</p>
<label for="${id}-token">Ingest token</label>
<div class="copy-row"><input id="${id}-token" class="token-value" type="text" readonly spellcheck="false" autocomplete="off">
<button type="button" class="copy" data-copy="${id}-token">Copy</button></div>
<p class="copied hint" role="status" hidden data-done="Copied to the clipboard." data-failed="The browser did not allow copying: the text is selected, copy it with your keyboard."></p>
<label for="${id}-snippet">Collector configuration (put it in your application's environment)</label>
<textarea id="${id}-snippet" class="snippet" rows="3" readonly spellcheck="false"></textarea>
<button type="button" class="copy" data-copy="${id}-snippet">Copy configuration</button>
</section>
</form>`;
}

function slotCard(slug: string, integration: ConsoleIntegration, slot: ConfiguredSlot | MissingSlot): SafeHtml {
  const name = MODE_NAMES[slot.mode];
  if (slot.status === 'not_configured') {
    return html`<section class="slot not-configured" data-mode="${slot.mode}"><h3>${name}</h3><p class="hint">Not configured.</p></section>`;
  }
  const connection = encodeURIComponent(slot.connectionId);
  return html`<section class="slot" data-mode="${slot.mode}" data-connection="${slot.connectionId}">
<h3>${name} <code class="connection-id">${slot.connectionId}</code></h3>
<dl>
<dt>Observation state</dt><dd class="observation-state" data-state="${slot.observationState}">${OBSERVATION_WORDS[slot.observationState]}</dd>
<dt>Last observation</dt><dd>${timeOf(slot.latestObservationAt)}</dd>
<dt>Open incidents</dt><dd class="open-incidents">${slot.openIncidentCount}</dd>
<dt>Active contract</dt><dd>${slot.activeContractVersionId ? html`<code>${slot.activeContractVersionId}</code>` : html`<span class="none">none</span>`}</dd>
</dl>
<p class="links"><a href="/console/${slug}/incidents?integration=${connection}">Incidents</a>
 <a href="/console/${slug}/connections/${connection}/coverage">Field coverage</a>
 <a href="/console/${slug}/usage?integration=${connection}">Usage</a></p>
${credentialForm(slug, integration, slot)}
</section>`;
}

function integrationCard(slug: string, integration: ConsoleIntegration): SafeHtml {
  return html`<article class="integration" id="${integration.id}">
<h2>${integration.name}</h2>
<p class="hint">${integration.provider} · ${integration.direction} · ${integration.protocol} · <code>${integration.id}</code></p>
<p class="hint">Integration key: <code class="integration-key">${integration.integrationKey}</code></p>
<div class="slots">${slotCard(slug, integration, integration.connections.sandbox)}${slotCard(slug, integration, integration.connections.live)}</div>
</article>`;
}

/** The Integrations page of a workspace. */
export function renderIntegrationsPage(data: IntegrationsPageData): string {
  const { slug } = data.workspace;
  const list =
    data.integrations.length === 0
      ? html`<p>No Integrations yet.</p>`
      : data.integrations.map((integration) => integrationCard(slug, integration));
  return layout({
    title: 'Integrations',
    script: 'credentials.js',
    body: html`${workspaceNav(slug, 'integrations')}
<h1>Integrations</h1>
${data.workspace.status === 'archived' ? html`<p class="hint">This workspace is archived: its credentials cannot change.</p>` : null}
${list}
${data.nextCursor ? html`<p class="pager"><a rel="next" href="/console/${slug}/integrations?cursor=${encodeURIComponent(data.nextCursor)}">Next page</a></p>` : null}
${credentialErrorTemplate()}
<template class="status-words">${Object.entries(CREDENTIAL_WORDS).map(([status, words]) => html`<span data-status="${status}">${words}</span>`)}</template>`,
  });
}
