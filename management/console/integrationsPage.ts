import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { listInventory } from '../integrations/integrationInventory.js';
import type { CanonicalIntegration } from '../integrations/integrationStore.js';
import { consoleWorkspace, type ConsoleWorkspace, signedOut, slugParams } from './consoleWorkspace.js';
import { renderIntegrationsPage } from './integrationsView.js';

/** One Integration as the page shows it: the inventory's, with the key its collectors name. */
export interface ConsoleIntegration extends CanonicalIntegration {
  integrationKey: string;
}

export interface IntegrationsPageData {
  workspace: ConsoleWorkspace;
  integrations: ConsoleIntegration[];
  /** The next page's address query, or null on the last page. */
  nextCursor: string | null;
}

/** The canonical inventory page (the service of GET /v1/integrations?view=canonical) plus each Integration's key. */
export async function integrationsPageData(
  deps: Deps,
  workspace: ConsoleWorkspace,
  cursor: string | undefined,
): Promise<IntegrationsPageData> {
  const page = await listInventory(deps, workspace.actor, { view: 'canonical', cursor, limit: '25' });
  const items = page.items as CanonicalIntegration[];
  const { rows } = await deps.pool.query<{ id: string; integration_key: string }>(
    'SELECT id, integration_key FROM integrations WHERE workspace_id = $1 AND id = ANY($2::text[])',
    [workspace.actor.workspaceId, items.map((item) => item.id)],
  );
  const keys = new Map(rows.map((row) => [row.id, row.integration_key]));
  return {
    workspace,
    integrations: items.map((item) => ({ ...item, integrationKey: keys.get(item.id) ?? '' })),
    nextCursor: page.nextCursor,
  };
}

/**
 * GET /console/{workspaceSlug}/integrations: the workspace's Integrations with their Sandbox and
 * Live slots, each slot's observation state, and its credential actions (issue, rotate, revoke
 * through the session route; the token shown once with the collector configuration).
 */
export default function integrationsPageRoute(app: FastifyInstance): void {
  app.get<{ Params: { workspaceSlug: string }; Querystring: { cursor?: string } }>(
    '/console/:workspaceSlug/integrations',
    {
      config: {
        errors: ['workspace_not_found', 'forbidden', 'workspace_modes_unavailable', 'invalid_inventory_query', 'invalid_inventory_cursor'],
      },
      schema: {
        hide: true,
        params: slugParams,
        querystring: { type: 'object', additionalProperties: false, properties: { cursor: { type: 'string', maxLength: 2048 } } },
      },
    },
    async (request, reply) => {
      const workspace = await consoleWorkspace(request, request.params.workspaceSlug);
      if (!workspace) return signedOut(reply);
      const data = await integrationsPageData(app.deps, workspace, request.query.cursor);
      return reply.type('text/html; charset=utf-8').send(renderIntegrationsPage(data));
    },
  );
}
