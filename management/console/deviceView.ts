import type { DeviceAuthorizationView } from '../oauth/deviceGrant.js';
import { html, type SafeHtml } from './html.js';
import { type DeviceForm, NETWORK_ERROR_WORDS, UNKNOWN_ERROR_WORDS, errorInWords, wordedCodes } from './errorWords.js';
import { consoleLayout, type LayoutWorkspace, layout } from './layout.js';
import { scopeInWords } from './scopeWords.js';

/**
 * The steps of `GET /device` (RFC 8628 §3.3, user interaction): who is asking for what is shown
 * only to a signed-in user with a verified e-mail (03 Account CLI OAuth 2).
 */
export type DeviceStep =
  | { step: 'sign-in'; userCode: string | null }
  | { step: 'verify-email'; email: string }
  | { step: 'code'; email: string; userCode: string | null; error: string | null }
  | { step: 'consent'; email: string; request: DeviceAuthorizationView };

/** The longest user code the page takes (the code is 9 characters shown; space for what people paste). */
export const USER_CODE_MAX_LENGTH = 64;

const TITLES: Record<DeviceStep['step'], string> = {
  'sign-in': 'Sign in to connect the CLI',
  'verify-email': 'Verify your e-mail address',
  code: 'Connect the CLI',
  consent: 'Allow access to your account?',
};

/**
 * The page for one step. A signed-in, verified user (the code and consent steps) sees it in the
 * console's frame, with their workspaces and sign-out in its header; sign-in and e-mail
 * verification are standalone pages. The page's own script (device.js) runs the consent.
 */
export function renderDevicePage(view: DeviceStep, workspaces: readonly LayoutWorkspace[] = []): string {
  if (view.step === 'code' || view.step === 'consent') {
    return consoleLayout({ title: TITLES[view.step], email: view.email, workspaces, script: 'device.js', body: body(view) });
  }
  return layout({
    title: TITLES[view.step],
    script: 'device.js',
    body: html`<h1>${TITLES[view.step]}</h1>
${body(view)}`,
  });
}

function body(view: DeviceStep): SafeHtml {
  switch (view.step) {
    case 'sign-in':
      return signIn(view.userCode);
    case 'verify-email':
      return html`${signedInAs(view.email)}
<p class="error" role="alert">${errorInWords('code', 'email_verification_required')}</p>`;
    case 'code':
      return codeEntry(view.userCode, view.error);
    case 'consent':
      return consent(view.request);
  }
}

/**
 * The words of every error the page's script can meet on `form`, rendered once here so that the
 * words live in one place (errorWords.ts) and the script carries none. A template is inert.
 */
function errorWordsFor(form: DeviceForm): SafeHtml {
  const entries = wordedCodes(form).map((code) => html`<span data-error="${code}">${errorInWords(form, code)}</span>`);
  return html`<template class="error-words" data-form="${form}">${entries}<span data-error="network">${NETWORK_ERROR_WORDS}</span><span data-error="unknown">${UNKNOWN_ERROR_WORDS}</span></template>`;
}

function userCodeLine(userCode: string | null): SafeHtml | null {
  return userCode ? html`<p>Code from your terminal: <strong class="user-code">${userCode}</strong></p>` : null;
}

function signIn(userCode: string | null): SafeHtml {
  return html`<p>The integration-watch CLI asks to use your account. Sign in to review what it asks for.</p>
${userCodeLine(userCode)}
<form id="sign-in" class="stack" method="post" action="/auth/login" data-form="sign-in">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" autofocus required maxlength="320" aria-describedby="sign-in-error">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024" aria-describedby="sign-in-error">
<p class="error" id="sign-in-error" role="alert" hidden></p>
<button type="submit" class="primary">Sign in</button>
${errorWordsFor('sign-in')}
</form>`;
}

/** Who is signed in, and a way out (another account, or a session to end), on the standalone e-mail step. */
function signedInAs(email: string): SafeHtml {
  return html`<form id="sign-out" class="signed-in" method="post" action="/auth/logout" data-form="sign-out">
<p>Signed in as <strong>${email}</strong></p>
<button type="submit" class="link">Sign out</button>
<p class="error" id="sign-out-error" role="alert" hidden></p>
${errorWordsFor('sign-out')}
</form>`;
}

function codeEntry(userCode: string | null, error: string | null): SafeHtml {
  return html`<form id="code" class="stack" method="get" action="/device" data-form="code">
<label for="user_code">Code shown in your terminal</label>
<input id="user_code" name="user_code" type="text" value="${userCode ?? ''}" required maxlength="${USER_CODE_MAX_LENGTH}"
 autocomplete="off" autocapitalize="characters" spellcheck="false" autofocus aria-describedby="code-error"${error ? html` aria-invalid="true"` : null}>
<p class="error" id="code-error" role="alert"${error ? null : html` hidden`}>${error}</p>
<button type="submit" class="primary">Continue</button>
</form>`;
}

function scopeItem(scope: string): SafeHtml {
  const words = scopeInWords(scope);
  return html`<li>${words ? html`<span class="scope-words">${words}</span> ` : null}<code class="scope-name">${scope}</code></li>`;
}

/** Who asks, and over what: the CLI over the user's workspaces, the setup tool over one Integration in one environment. */
function requester(request: DeviceAuthorizationView): SafeHtml {
  const client = html`<strong class="client-name">${request.clientName}</strong> (<code>${request.clientId}</code>)`;
  const { connection } = request;
  if (!connection) {
    return html`<p>${client} asks to act as you in the workspaces you are a member of, with your role in each. It asks for these permissions:</p>`;
  }
  return html`<p>${client} asks to act as you on one Integration only: <strong class="integration-name">${connection.integrationName}</strong> (<code>${connection.workspaceIntegrationId}</code>), connection <code class="connection-id">${connection.id}</code> in the environment <strong class="environment-name">${connection.environmentName}</strong> (${connection.mode}) of the workspace <code class="workspace-slug">${connection.workspace}</code>. It asks for these permissions:</p>`;
}

function consent(request: DeviceAuthorizationView): SafeHtml {
  const { userCode } = request;
  const expires = new Date(request.expiresAt);
  const expiresAt = Number.isNaN(expires.getTime()) ? request.expiresAt : `${expires.toISOString().slice(11, 16)} UTC`;
  return html`<section id="request">
${requester(request)}
<ul class="scopes">
${request.scopes.map(scopeItem)}
</ul>
<p class="hint">This request expires at <time datetime="${request.expiresAt}">${expiresAt}</time>.</p>
</section>
<form id="consent" class="stack" method="post" action="/oauth/device/consent" data-form="consent">
<label for="user_code">Code</label>
<input id="user_code" name="user_code" type="text" value="${userCode}" readonly aria-describedby="code-hint consent-error">
<p class="hint" id="code-hint">Approve only if you just started a sign-in in your own terminal and it shows this code. <a href="/device">Enter another code</a></p>
<p class="error" id="consent-error" role="alert" hidden></p>
<p id="sign-in-again" hidden><a href="/device?user_code=${encodeURIComponent(userCode)}">Sign in again</a></p>
<div class="actions">
<button type="submit" name="decision" value="approve" class="primary">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
${errorWordsFor('consent')}
</form>
<section id="approved" class="outcome" role="status" hidden>
<h2 tabindex="-1">Approved</h2>
<p>You can return to your terminal: the CLI is signed in.</p>
</section>
<section id="denied" class="outcome" role="status" hidden>
<h2 tabindex="-1">Denied</h2>
<p>The CLI gets no access to your account. You can close this page.</p>
</section>`;
}
