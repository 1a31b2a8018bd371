// Console page helpers (use these to add a page under /console/…):
//   consoleWorkspacePage(app, path, options, handler) — GET /console/workspaces/:workspaceSlug/<path>:
//     session (else 303 to sign-in, back after), verified e-mail, membership (else 404 page);
//     a catalogue 404 the handler throws (a foreign connection, incident, version) is the 404 page too
//   consoleAccountPage(app, path, options, handler) — a signed-in page about no one workspace
//   pager(basePath, query, nextCursor) — "First page" / "Next page" links of a cursor list
//   localTime(iso) — a <time datetime> the script shows in the viewer's time zone
// with consoleLayout (layout.ts), errorTemplate/fieldError/formError (consoleForm.ts),
// WORKSPACE_NAV (consoleNav.ts) and consoleErrorWords (errorWords.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../shared/errors/index.js';
import type { SessionPrincipal } from '../auth/principal.js';
import { currentSession } from '../auth/sessionAuth.js';
import { type WorkspaceSummary, listWorkspaces } from '../workspaces/workspaceService.js';
import { errorTemplate, formError } from './consoleForm.js';
import type { AssetName } from './assets.js';
import { html, type SafeHtml } from './html.js';
import { consoleLayout, layout } from './layout.js';

/** A page's query schema properties (the page declares its query: unknown parameters are 400). */
export type QueryProperties = Record<string, { type: 'string'; maxLength?: number; minLength?: number; pattern?: string }>;

/** What a page handler gets: the session, the user's workspaces, and the frame to render in. */
export interface ConsolePageContext {
  session: SessionPrincipal;
  workspaces: WorkspaceSummary[];
  /** Renders `body` in the console's frame (header, switcher, this workspace's navigation). */
  render(page: { title: string; body: SafeHtml; nav?: string; script?: AssetName }): string;
}

export interface WorkspacePageContext extends ConsolePageContext {
  workspace: WorkspaceSummary;
}

/** The address of the sign-in page that comes back to `url` after signing in. */
export function signInPath(url: string): string {
  return `/?next=${encodeURIComponent(url)}`;
}

/** A `next` address the sign-in page may follow: a console path of this origin only. */
export function safeNext(next: string | undefined): string | null {
  return next && /^\/console\/[^\\]*$/.test(next) && !next.startsWith('//') ? next : null;
}

function sendHtml(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(markup);
}

/** The console's 404: the same answer for a workspace that does not exist and one the user is not in. */
export function notFoundPage(): string {
  return layout({
    title: 'Not found',
    body: html`<h1>Not found</h1>
<p>This page does not exist, or it is in a workspace you are not a member of.</p>
<p><a href="/">Your workspaces</a></p>`,
  });
}

/** An unverified e-mail: the console's pages need a verified one (as their JSON routes do). */
export function verifyFirstPage(email: string): string {
  return layout({
    title: 'Verify your e-mail address',
    script: 'console.js',
    body: html`<h1>Verify your e-mail address</h1>
<p>You are signed in as <strong>${email}</strong>. Open the link in the verification e-mail we sent you, then reload this page.</p>
<form id="sign-out" data-api="POST /auth/logout" data-next="/"><button type="submit">Sign out</button>${formError('sign-out')}${errorTemplate([])}</form>`,
  });
}

type Handler<Ctx, Q> = (request: FastifyRequest<{ Querystring: Q; Params: Record<string, string> }>, ctx: Ctx) => Promise<string>;

function pageSchema(query: QueryProperties, params?: object) {
  return {
    hide: true,
    querystring: { type: 'object', additionalProperties: false, properties: query },
    ...(params ? { params } : {}),
  } as const;
}

async function signedIn(
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<{ session: SessionPrincipal; workspaces: WorkspaceSummary[] } | null> {
  const session = await currentSession(request);
  if (!session) {
    reply.redirect(signInPath(request.url), 303);
    return null;
  }
  if (!session.emailVerified) {
    sendHtml(reply, verifyFirstPage(session.email));
    return null;
  }
  return { session, workspaces: await listWorkspaces(request.server.deps, session.userId) };
}

/**
 * GET `/console/<path>`: a signed-in page about no one workspace. Without a session, a 303 to the
 * sign-in page, which comes back here.
 */
export function consoleAccountPage<Q = Record<string, never>>(
  app: FastifyInstance,
  path: string,
  options: { query?: QueryProperties },
  handler: Handler<ConsolePageContext, Q>,
): void {
  app.get<{ Querystring: Q; Params: Record<string, string> }>(
    `/console/${path}`,
    { config: { errors: [] }, schema: pageSchema(options.query ?? {}) },
    async (request, reply) => {
      const signed = await signedIn(request, reply);
      if (!signed) return reply;
      const ctx: ConsolePageContext = {
        ...signed,
        render: (page) => consoleLayout({ ...page, email: signed.session.email, workspaces: signed.workspaces }),
      };
      return sendHtml(reply, await handler(request, ctx));
    },
  );
}

/**
 * GET `/console/workspaces/:workspaceSlug/<path>`: a page of one workspace. Needs a session (else
 * 303 to sign-in and back), a verified e-mail, and a membership of the workspace (else the 404
 * page: a workspace the user is not in does not exist for them). Role checks are the handler's
 * (the services it calls throw `forbidden` for a viewer).
 */
export function consoleWorkspacePage<Q = Record<string, never>>(
  app: FastifyInstance,
  path: string,
  options: { query?: QueryProperties },
  handler: Handler<WorkspacePageContext, Q>,
): void {
  app.get<{ Querystring: Q; Params: Record<string, string> }>(
    `/console/workspaces/:workspaceSlug/${path}`,
    {
      config: { errors: [] },
      schema: pageSchema(options.query ?? {}, {
        type: 'object',
        required: ['workspaceSlug'],
        properties: { workspaceSlug: { type: 'string', maxLength: 64 } },
      }),
    },
    async (request, reply) => {
      const signed = await signedIn(request, reply);
      if (!signed) return reply;
      const workspace = signed.workspaces.find((item) => item.slug === request.params.workspaceSlug);
      if (!workspace) return sendHtml(reply, notFoundPage(), 404);
      const ctx: WorkspacePageContext = {
        ...signed,
        workspace,
        render: (page) => consoleLayout({ ...page, email: signed.session.email, workspaces: signed.workspaces, workspace }),
      };
      try {
        return sendHtml(reply, await handler(request, ctx));
      } catch (error) {
        // A connection, incident or version of another workspace, or none: the same page as a
        // workspace the user is not in. Other errors are the catalogue's answer.
        if (isAppError(error) && error.status === 404) return sendHtml(reply, notFoundPage(), 404);
        throw error;
      }
    },
  );
}

/**
 * The links of a cursor list: "Next page" carries the list's `nextCursor` (the JSON route's), with
 * the page's other query parameters; "First page" drops the cursor. Nothing when there is one page.
 */
export function pager(basePath: string, query: Record<string, string | undefined>, nextCursor: string | null): SafeHtml | null {
  const others = Object.entries(query).filter(([name, value]) => name !== 'cursor' && value !== undefined) as [string, string][];
  const address = (cursor: string | null) => {
    const params = new URLSearchParams(others);
    if (cursor) params.set('cursor', cursor);
    const search = params.toString();
    return search ? `${basePath}?${search}` : basePath;
  };
  const first = query.cursor ? html`<a href="${address(null)}">First page</a>` : null;
  const next = nextCursor ? html`<a href="${address(nextCursor)}" rel="next">Next page</a>` : null;
  return first || next ? html`<nav class="pager" aria-label="Pages">${first}${next}</nav>` : null;
}

/** An instant as a `<time>`: UTC text server-side, the viewer's local time once the script runs. */
export function localTime(iso: string | null): SafeHtml {
  if (!iso) return html`—`;
  const date = new Date(iso);
  const text = Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return html`<time datetime="${iso}">${text}</time>`;
}
