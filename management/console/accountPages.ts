import type { FastifyInstance } from 'fastify';
import { currentSession } from '../auth/sessionAuth.js';
import { type WorkspaceSummary, listWorkspaces } from '../workspaces/workspaceService.js';
import { errorTemplate, fieldError, fieldErrorId, formError } from './consoleForm.js';
import { WORKSPACE_NAV } from './consoleNav.js';
import { safeNext, verifyFirstPage } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';
import { consoleLayout, layout, workspacePagePath } from './layout.js';

const pageSchema = (query: Record<string, object>) =>
  ({ hide: true, querystring: { type: 'object', additionalProperties: false, properties: query } }) as const;

/** The sign-in form: POST /auth/login, then `next` (a console path) or the workspace list. */
function signInForm(next: string | null): SafeHtml {
  return html`<form id="sign-in" class="stack" data-api="POST /auth/login" data-next="${next ?? '/'}">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" autofocus required maxlength="320" aria-describedby="${fieldErrorId('sign-in', 'email')}">
${fieldError('sign-in', 'email')}
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024" aria-describedby="${fieldErrorId('sign-in', 'password')}">
${fieldError('sign-in', 'password')}
${formError('sign-in')}
<button type="submit" class="primary">Sign in</button>
${errorTemplate([
  { code: 'unauthenticated', field: 'password', words: 'The e-mail address or the password is wrong.' },
  { code: 'invalid_request', field: 'email', words: 'Enter your e-mail address and your password.' },
  { code: 'rate_limited', words: 'Too many sign-in attempts. Wait a minute, then try again.' },
  'forbidden',
  'service_unavailable',
])}
</form>
<p>No account yet? <a href="/console/signup">Create one</a></p>`;
}

function workspaceRow(workspace: WorkspaceSummary): SafeHtml {
  const archived = workspace.status === 'archived';
  const action = archived ? 'restore' : 'archive';
  const formId = `${action}-${workspace.slug}`;
  const lifecycle = workspace.canManageLifecycle
    ? html`<form id="${formId}" class="inline" data-api="POST /workspaces/${workspace.slug}/${action}">
<button type="submit">${archived ? 'Restore' : 'Archive'}</button>
${formError(formId)}
${errorTemplate(['workspace_not_found', 'workspace_unavailable', 'forbidden', 'workspace_limit_reached', 'mode_cutover_write_paused'])}
</form>`
    : null;
  const name = archived
    ? html`<span class="name">${workspace.name}</span>`
    : html`<a class="name" href="${workspacePagePath(workspace.slug, WORKSPACE_NAV[0].path)}">${workspace.name}</a>`;
  return html`<li class="workspace" data-slug="${workspace.slug}">
<div>${name} <code>${workspace.slug}</code> <span class="badge">${archived ? 'archived' : workspace.role}</span></div>
${lifecycle}
</li>`;
}

function createWorkspaceForm(): SafeHtml {
  const id = 'create-workspace';
  return html`<form id="${id}" class="stack" data-api="POST /workspaces">
<h2>New workspace</h2>
<label for="workspace-name">Name</label>
<input id="workspace-name" name="name" type="text" required maxlength="80" aria-describedby="${fieldErrorId(id, 'name')}">
${fieldError(id, 'name')}
<label for="workspace-slug">Address (optional)</label>
<input id="workspace-slug" name="slug" type="text" maxlength="48" spellcheck="false" autocapitalize="none" aria-describedby="workspace-slug-hint ${fieldErrorId(id, 'slug')}">
<p class="hint" id="workspace-slug-hint">Lower-case letters, digits and hyphens; made from the name when empty.</p>
${fieldError(id, 'slug')}
${formError(id)}
<button type="submit" class="primary">Create workspace</button>
${errorTemplate([
  { code: 'invalid_workspace_name', field: 'name' },
  { code: 'invalid_workspace_slug', field: 'slug' },
  { code: 'workspace_slug_unavailable', field: 'slug' },
  'invalid_request',
  'invalid_billing_account_id',
  'account_required',
  'account_not_found',
  'account_unavailable',
  'workspace_limit_reached',
  'workspace_creation_rate_limited',
  'forbidden',
  'mode_cutover_write_paused',
])}
</form>`;
}

function workspaceList(email: string, workspaces: WorkspaceSummary[]): string {
  return consoleLayout({
    title: 'Your workspaces',
    email,
    workspaces,
    body: html`${
      workspaces.length
        ? html`<ul class="rows workspaces">${workspaces.map(workspaceRow)}</ul>`
        : html`<p>You are not a member of any workspace yet. Create one below.</p>`
    }
${createWorkspaceForm()}`,
  });
}

function signUpPage(): string {
  const id = 'sign-up';
  return layout({
    title: 'Create your account',
    script: 'console.js',
    body: html`<h1>Create your account</h1>
<form id="${id}" class="stack" data-api="POST /auth/signup" data-show="#signed-up">
<label for="name">Your name</label>
<input id="name" name="name" type="text" autocomplete="name" autofocus required maxlength="120">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="${fieldErrorId(id, 'email')}">
${fieldError(id, 'email')}
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="256" aria-describedby="password-hint">
<p class="hint" id="password-hint">8 to 256 characters.</p>
${formError(id)}
<button type="submit" class="primary">Create account</button>
${errorTemplate([{ code: 'email_unavailable', field: 'email' }, 'invalid_signup', 'rate_limited', 'forbidden', 'service_unavailable'])}
</form>
<section id="signed-up" class="outcome" role="status" hidden>
<h2 tabindex="-1">Check your e-mail</h2>
<p>We sent a verification link to <strong data-result="user.email"></strong>. Open it to finish creating your account.</p>
</section>
<p>Already have an account? <a href="/">Sign in</a></p>`,
  });
}

function verifyEmailPage(token: string | null): string {
  const id = 'verify-email';
  return layout({
    title: 'Verify your e-mail address',
    script: 'console.js',
    body: html`<h1>Verify your e-mail address</h1>
<form id="${id}" class="stack" data-api="POST /auth/verify-email" data-show="#verified">
<input type="hidden" name="token" value="${token ?? ''}">
<p>Confirm that this e-mail address is yours.</p>
${formError(id)}
<button type="submit" class="primary" autofocus>Verify my e-mail address</button>
${errorTemplate(['invalid_verification_token', 'invalid_request', 'rate_limited', 'service_unavailable'])}
</form>
<section id="verified" class="outcome" role="status" hidden>
<h2 tabindex="-1">E-mail address verified</h2>
<p><strong data-result="user.email"></strong> is verified. <a href="/">Continue to the console</a></p>
</section>`,
  });
}

/**
 * The account pages: `/` (sign-in, or the workspace list with create, archive and restore),
 * `/console/signup` and `/console/verify-email?token=…` (the link of the sign-up mail:
 * sessionService.ts). Verification is a button, not the page load, so that a mail scanner
 * opening the link does not use the token.
 */
export default function accountPages(app: FastifyInstance): void {
  app.get<{ Querystring: { next?: string } }>(
    '/',
    { config: { errors: [] }, schema: pageSchema({ next: { type: 'string', maxLength: 2048 } }) },
    async (request, reply) => {
      reply.type('text/html; charset=utf-8');
      const session = await currentSession(request);
      if (!session) {
        return reply.send(
          layout({ title: 'Sign in', script: 'console.js', body: html`<h1>Sign in</h1>\n${signInForm(safeNext(request.query.next))}` }),
        );
      }
      const next = safeNext(request.query.next);
      if (next) return reply.redirect(next, 303);
      if (!session.emailVerified) return reply.send(verifyFirstPage(session.email));
      return reply.send(workspaceList(session.email, await listWorkspaces(app.deps, session.userId)));
    },
  );
  app.get('/console/signup', { config: { errors: [] }, schema: pageSchema({}) }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(signUpPage()),
  );
  app.get<{ Querystring: { token?: string } }>(
    '/console/verify-email',
    { config: { errors: [] }, schema: pageSchema({ token: { type: 'string', maxLength: 128 } }) },
    async (request, reply) => reply.type('text/html; charset=utf-8').send(verifyEmailPage(request.query.token ?? null)),
  );
}
