import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WorkspaceUserActor } from '../auth/principal.js';
import { currentSession } from '../auth/sessionAuth.js';
import { requireWorkspaceManager } from '../auth/workspaceUserAuth.js';
import { html, type SafeHtml } from './html.js';
import { layout } from './layout.js';

/** What a workspace page of the console knows of its viewer. */
export interface ConsoleWorkspace {
  actor: WorkspaceUserActor;
  email: string;
  slug: string;
  status: 'active' | 'archived';
}

/**
 * The signed-in owner or admin of the workspace `slug`, as the console's session routes check
 * them (02 Authentication 4: a missing workspace or a non-member is 404 `workspace_not_found`, a
 * viewer 403 `forbidden`, thrown as the catalogue answer). Null without a session: the page then
 * answers `signedOut`.
 */
export async function consoleWorkspace(request: FastifyRequest, slug: string): Promise<ConsoleWorkspace | null> {
  const session = await currentSession(request);
  if (!session) return null;
  const { actor, status } = await requireWorkspaceManager(request.server.deps.pool, session, slug);
  return { actor, email: session.email, slug, status };
}

/** The answer of a workspace page without a session: a page that says so and links to sign-in. */
export function signedOut(reply: FastifyReply): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(
    layout({
      title: 'Signed out',
      body: html`<h1>Signed out</h1>
<p>Your session has ended. <a href="/">Sign in</a> to continue.</p>`,
    }),
  );
}

/** The links between a workspace's pages, above each page's own content. */
export function workspaceNav(slug: string, current: string): SafeHtml {
  const link = (path: string, label: string) =>
    path === current
      ? html`<a href="/console/${slug}/${path}" aria-current="page">${label}</a>`
      : html`<a href="/console/${slug}/${path}">${label}</a>`;
  return html`<nav class="workspace-nav" aria-label="Workspace"><span class="workspace-slug">${slug}</span> ${link('integrations', 'Integrations')} ${link('usage', 'Usage')}</nav>`;
}

/** A timestamp as the viewer reads it: UTC text, the exact instant in `datetime`. */
export function timeOf(iso: string | null, none = 'never'): SafeHtml {
  if (iso === null) return html`<span class="none">${none}</span>`;
  const date = new Date(iso);
  const text = Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return html`<time datetime="${iso}">${text}</time>`;
}

/** The console's path parameters beside the slug: a value no id can have is 404 by the service. */
export const slugParams = {
  type: 'object',
  required: ['workspaceSlug'],
  properties: { workspaceSlug: { type: 'string', maxLength: 128 } },
  additionalProperties: false,
} as const;
