import { AppError, isAppError } from '../../shared/errors/index.js';
import type { WorkspaceUserActor } from '../auth/principal.js';
import { requireWorkspaceManager } from '../auth/workspaceUserAuth.js';
import type { Deps } from '../deps.js';
import type { WorkspacePageContext } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';

/** A workspace page's viewer as its services need them: the owner or admin acting in the workspace. */
export interface ConsoleWorkspace {
  actor: WorkspaceUserActor;
  slug: string;
  status: 'active' | 'archived';
}

/**
 * The page body of a workspace page that reads as the signed-in owner or admin (02 Authentication
 * 4, as the console's session routes): a viewer gets a page that says so. Other catalogue errors
 * of the services (a foreign or unknown connection or incident: 404) are the route's answer.
 */
export async function asWorkspaceManager(
  deps: Deps,
  ctx: WorkspacePageContext,
  body: (workspace: ConsoleWorkspace) => Promise<SafeHtml>,
): Promise<SafeHtml> {
  let workspace: ConsoleWorkspace;
  try {
    const { actor, status } = await requireWorkspaceManager(deps.pool, ctx.session, ctx.workspace.slug);
    workspace = { actor, status, slug: ctx.workspace.slug };
  } catch (error) {
    if (isAppError(error) && error.code === 'forbidden') {
      return html`<p>Only owners and admins of this workspace see its Integrations, credentials and evidence.</p>`;
    }
    throw error;
  }
  return body(workspace);
}

/** A page's required query member: its absence is the JSON route's own 400. */
export function requiredQuery(value: string | undefined, code: 'connection_required'): string {
  if (value === undefined || value === '') throw new AppError(code);
  return value;
}
