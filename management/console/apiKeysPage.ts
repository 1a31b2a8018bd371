import type { FastifyInstance } from 'fastify';
import { isAppError } from '../../shared/errors/index.js';
import { listWorkspaceApiKeys } from '../apiKeys/apiKeyService.js';
import type { ApiKeyRecord } from '../apiKeys/apiKeyStore.js';
import { API_KEY_NAME_MAX } from '../apiKeys/rules.js';
import { WORKSPACE_SCOPES } from '../auth/scopes.js';
import { errorTemplate, fieldError, fieldErrorId, formError } from './consoleForm.js';
import { consoleWorkspacePage, localTime } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';

const DAY = 24 * 3600;
/** The lifetimes the form offers (the route takes 60 s to 366 days, or none). */
const LIFETIMES: readonly [string, string][] = [
  ['', 'Never expires'],
  [String(30 * DAY), '30 days'],
  [String(90 * DAY), '90 days'],
  [String(366 * DAY), '366 days'],
];

function keyStatus(key: ApiKeyRecord, now: number): string {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

function keyRow(slug: string, key: ApiKeyRecord, now: number): SafeHtml {
  const status = keyStatus(key, now);
  const formId = `revoke-${key.id}`;
  return html`<li class="api-key" data-id="${key.id}">
<div><strong class="name">${key.name || 'Unnamed key'}</strong> <span class="badge">${status}</span></div>
<div class="hint"><code>${key.id}</code> · created ${localTime(key.createdAt)} · ${key.expiresAt ? html`expires ${localTime(key.expiresAt)}` : 'never expires'}</div>
<div class="scopes-line">${key.scopes.map((scope) => html`<code>${scope}</code> `)}</div>
${
  status === 'revoked'
    ? null
    : html`<form id="${formId}" class="inline" data-api="DELETE /workspaces/${slug}/api-keys/${key.id}">
<button type="submit">Revoke</button>
${formError(formId)}
${errorTemplate(['api_key_not_found', 'workspace_not_found', 'forbidden', 'mode_cutover_write_paused'])}
</form>`
}
</li>`;
}

function createForm(slug: string): SafeHtml {
  const id = 'create-api-key';
  return html`<form id="${id}" class="stack" data-api="POST /workspaces/${slug}/api-keys" data-show="#created-key">
<h2>New API key</h2>
<label for="key-name">Name</label>
<input id="key-name" name="name" type="text" maxlength="${API_KEY_NAME_MAX}" aria-describedby="${fieldErrorId(id, 'name')}">
${fieldError(id, 'name')}
<fieldset>
<legend>Permissions</legend>
${WORKSPACE_SCOPES.map((scope) => html`<label class="check"><input type="checkbox" name="scopes" value="${scope}" data-array> <code>${scope}</code></label>`)}
</fieldset>
<label for="key-lifetime">Lifetime</label>
<select id="key-lifetime" name="expiresInSeconds" data-type="integer">
${LIFETIMES.map(([value, label]) => html`<option value="${value}">${label}</option>`)}
</select>
${formError(id)}
<button type="submit" class="primary">Create API key</button>
${errorTemplate(['invalid_api_key_request', 'workspace_not_found', 'forbidden', 'mode_cutover_write_paused'])}
</form>
<section id="created-key" class="outcome" role="status" hidden>
<h2 tabindex="-1">Your new API key</h2>
<p>Copy it now: it is shown this once and cannot be shown again.</p>
<p class="secret"><code id="new-key" data-result="apiKey.key"></code></p>
<div class="actions"><button type="button" data-copy="#new-key" data-copied="Copied">Copy</button> <a href="">Done</a></div>
</section>`;
}

/**
 * GET /console/workspaces/{slug}/api-keys: the workspace's keys (owner or admin, as the JSON
 * routes), create (the key shown once, with a copy button) and revoke.
 */
export default function apiKeysPage(app: FastifyInstance): void {
  consoleWorkspacePage(app, 'api-keys', {}, async (_request, ctx) => {
    const slug = ctx.workspace.slug;
    let body: SafeHtml;
    try {
      const keys = await listWorkspaceApiKeys(app.deps, ctx.session, slug);
      const now = app.deps.clock.now().getTime();
      body = html`${keys.length ? html`<ul class="rows api-keys">${keys.map((key) => keyRow(slug, key, now))}</ul>` : html`<p>This workspace has no API keys yet.</p>`}
${createForm(slug)}`;
    } catch (error) {
      if (!isAppError(error)) throw error;
      if (error.code === 'forbidden') body = html`<p>Only owners and admins of this workspace manage its API keys.</p>`;
      else if (error.code === 'workspace_not_found') body = html`<p>This workspace is archived. Restore it to manage its API keys.</p>`;
      else throw error;
    }
    return ctx.render({ title: 'API keys', nav: 'api-keys', body });
  });
}
