import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { listInventory } from '../integrations/integrationInventory.js';
import type { CanonicalIntegration } from '../integrations/integrationStore.js';
import { consoleWorkspacePage } from './consoleRoute.js';
import { asWorkspaceManager, type ConsoleWorkspace } from './consoleWorkspace.js';
import { integrationsBody } from './integrationsView.js';

/** Integrations a page lists at once. */
export const CONSOLE_INTEGRATION_PAGE = 25;

/** One Integration as the page shows it: the inventory's, with the key its collectors name. */
export interface ConsoleIntegration extends CanonicalIntegration {
  integrationKey: string;
}

export interface IntegrationsPageData {
  workspace: ConsoleWorkspace;
  integrations: ConsoleIntegration[];
  cursor: string | undefined;
  nextCursor: string | null;
}

/** The canonical inventory page (the service of GET /v1/integrations?view=canonical) plus each Integration's key. */
export async function integrationsPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  cursor: string | undefined,
): Promise<IntegrationsPageData> {
  const page = await listInventory(deps, workspace.actor, { view: 'canonical', cursor, limit: String(CONSOLE_INTEGRATION_PAGE) });
  const items = page.items as CanonicalIntegration[];
  const { rows } = await deps.pool.query<{ id: string; integration_key: string }>(
    'SELECT id, integration_key FROM integrations WHERE workspace_id = $1 AND id = ANY($2::text[])',
    [workspace.actor.workspaceId, items.map((item) => item.id)],
  );
  const keys = new Map(rows.map((row) => [row.id, row.integration_key]));
  return {
    workspace,
    integrations: items.map((item) => ({ ...item, integrationKey: keys.get(item.id) ?? '' })),
    cursor,
    nextCursor: page.nextCursor,
  };
}

/**
 * GET /console/workspaces/{slug}/integrations[?cursor]: the workspace's Integrations with their
 * Sandbox and Live slots, each slot's observation state, and its credential actions (issue,
 * rotate, revoke through the session route; a new token shown once with the collector configuration).
 */
export default function integrationsPage(app: FastifyInstance): void {
  consoleWorkspacePage<{ cursor?: string }>(
    app,
    'integrations',
    { query: { cursor: { type: 'string', maxLength: 2048 } } },
    async (request, ctx) => {
      const body = await asWorkspaceManager(app.deps, ctx, async (workspace) =>
        integrationsBody(await integrationsPageData(app.deps, workspace, request.query.cursor)),
      );
      return ctx.render({ title: 'Integrations', nav: 'integrations', body });
    },
  );
}
