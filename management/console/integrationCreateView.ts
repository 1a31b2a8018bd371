import type { ErrorCode } from '../../shared/errors/index.js';
import { DIRECTIONS, PROTOCOLS } from '../integrations/schemas.js';
import { type FormError, errorTemplate, fieldError, fieldErrorId, formError } from './consoleForm.js';
import { html, type SafeHtml } from './html.js';

const PROTOCOL_WORDS: Record<(typeof PROTOCOLS)[number], string> = {
  'http-api': 'HTTP API',
  'http-webhook': 'HTTP webhook',
  'scheduled-feed': 'Scheduled feed',
  queue: 'Queue',
};

/** The creation route's errors in the form's words (the rest read as errorWords.ts says). */
const CREATE_ERRORS: readonly FormError[] = [
  {
    code: 'invalid_integration',
    field: 'name',
    words: 'Give the Integration a name and a provider of 1 to 120 characters each, and choose its direction, protocol and first mode.',
  },
  { code: 'workspace_unavailable', words: 'This workspace is archived: restore it to add Integrations.' },
  {
    code: 'workspace_modes_unavailable',
    words: 'This workspace has no Sandbox and Live environments: Integrations are added through its setup.',
  },
  { code: 'workspace_authorization_changed', words: 'Your role in this workspace changed meanwhile. Reload the page and try again.' },
  { code: 'forbidden', words: 'Only an owner or admin of this workspace can add Integrations.' },
  { code: 'idempotency_conflict', words: 'This request was already used for another change. Reload the page and try again.' },
  ...(
    [
      'workspace_not_found',
      'unauthenticated',
      'email_verification_required',
      'mode_cutover_write_paused',
      'service_unavailable',
    ] as ErrorCode[]
  ).map((code) => ({ code })),
];

/**
 * "Add an Integration": the first connection of a new Integration in the chosen mode (01), posted
 * to the console's creation route; its collector configuration, with the token shown this once.
 */
export function integrationCreateSection(slug: string): SafeHtml {
  const field = (name: string) => fieldErrorId('create-integration', name);
  return html`<section aria-labelledby="create-heading">
<h2 id="create-heading">Add an Integration</h2>
<form id="create-integration" class="stack" data-api="POST /workspaces/${slug}/integrations" data-idempotent data-show="#created" data-hide-on-success>
<label for="integration-name">Name</label>
<input id="integration-name" name="name" type="text" required maxlength="120" autocomplete="off" placeholder="Orders sync" aria-describedby="${field('name')}">
${fieldError('create-integration', 'name')}
<label for="integration-provider">Provider</label>
<input id="integration-provider" name="provider" type="text" required maxlength="120" autocomplete="off" placeholder="Stripe">
<label for="integration-direction">Direction</label>
<select id="integration-direction" name="direction">${DIRECTIONS.map((value) => html`<option value="${value}">${value === 'outbound' ? 'Outbound (we call it)' : 'Inbound (it calls us)'}</option>`)}</select>
<label for="integration-protocol">Protocol</label>
<select id="integration-protocol" name="protocol">${PROTOCOLS.map((value) => html`<option value="${value}">${PROTOCOL_WORDS[value]}</option>`)}</select>
<fieldset>
<legend>First connection</legend>
<label class="check"><input type="radio" name="mode" value="sandbox" checked> Sandbox</label>
<label class="check"><input type="radio" name="mode" value="live"> Live</label>
</fieldset>
${formError('create-integration')}
<button type="submit" class="primary">Add the Integration</button>
${errorTemplate(CREATE_ERRORS)}
</form>
<section id="created" class="outcome token" role="status" hidden>
<h3 tabindex="-1">Integration added</h3>
<p>Its first connection is <code class="created-connection" data-result="integration.connectionId"></code>. Copy its ingest token now: it is shown this once and cannot be shown again. A lost token needs a rotation.</p>
<p class="secret"><code id="created-token" class="token-value" data-result="collectorConfiguration.ingestToken"></code></p>
<p>The collector configuration, for your application's environment:</p>
<pre class="snippet" id="created-snippet">INTEGRATION_KEY=<span data-result="collectorConfiguration.integrationKey"></span>
CONNECTION_KEY=<span data-result="collectorConfiguration.connectionKey"></span>
INGEST_TOKEN=<span data-result="collectorConfiguration.ingestToken"></span></pre>
<div class="actions"><button type="button" data-copy="#created-snippet" data-copied="Copied">Copy configuration</button> <a href="">Done</a></div>
</section>
</section>`;
}
