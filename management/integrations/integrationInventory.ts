import { inReadSnapshot } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import type { WorkspacePrincipal } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { pageLimit } from '../pagination/pageLimit.js';
import { listWorkspaceEnvironments, requireModeTopology } from '../environments/environmentStore.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { WorkspaceModel } from '../workspaces/workspaceStore.js';
import { assertCursorSyntax, decodeInventoryCursor, encodeInventoryCursor } from './inventoryCursor.js';
import {
  readCanonicalIntegration,
  readCanonicalPage,
  readCompatibilityPage,
  type CanonicalIntegration,
  type CompatibilityItem,
} from './integrationStore.js';

export const DEFAULT_INVENTORY_LIMIT = 50;

/** The raw query of GET /v1/integrations; values are strings (no coercion). */
export interface InventoryQuery {
  view?: 'canonical';
  limit?: string;
  cursor?: string;
  environmentId?: string;
}

export type InventoryPage =
  | { model: 'canonical'; items: CanonicalIntegration[]; nextCursor: string | null }
  | { model: WorkspaceModel; items: CompatibilityItem[]; nextCursor: string | null };

/**
 * GET /v1/integrations (01 Integration and connection reads). Query errors come first (400
 * `invalid_inventory_query`), then the topology (409 for `view=canonical` on a legacy,
 * incomplete or mixed workspace), then the cursor's binding (400 `invalid_inventory_cursor`).
 */
export async function listInventory(
  deps: Deps,
  principal: Pick<WorkspacePrincipal, 'workspaceId' | 'model'>,
  query: InventoryQuery,
): Promise<InventoryPage> {
  const limit = pageLimit(query.limit, DEFAULT_INVENTORY_LIMIT, 'invalid_inventory_query');
  if (query.view === 'canonical' && query.environmentId !== undefined) throw new AppError('invalid_inventory_query');
  if (query.cursor !== undefined) assertCursorSyntax(query.cursor);
  if (query.environmentId !== undefined && !hasIdForm(query.environmentId, 'env_')) throw new AppError('invalid_inventory_query');
  const secret = deps.config.secretEncryptionKey;
  const workspaceId = principal.workspaceId;

  if (query.view === 'canonical') {
    requireCanonicalWorkspace(principal);
    return inReadSnapshot(deps.pool, async (db) => {
      const topology = await requireModeTopology(db, principal.workspaceId);
      const afterId =
        query.cursor === undefined
          ? null
          : decodeInventoryCursor(secret, query.cursor, { view: 'canonical', workspaceId, environmentId: null });
      const page = await readCanonicalPage(db, { workspaceId, afterId, limit, topology });
      const last = page.items[page.items.length - 1];
      const nextCursor =
        page.hasMore && last
          ? encodeInventoryCursor(secret, { view: 'canonical', workspaceId, environmentId: null, afterId: last.id })
          : null;
      return { model: 'canonical' as const, items: page.items, nextCursor };
    });
  }

  const environmentId = query.environmentId ?? null;
  return inReadSnapshot(deps.pool, async (db) => {
    const listed = await listWorkspaceEnvironments(db, workspaceId);
    if (!listed) throw new AppError('service_unavailable');
    // The filter is an exact environment of this workspace; another workspace's id is a bad query.
    if (environmentId !== null && !listed.environments.some((environment) => environment.id === environmentId)) {
      throw new AppError('invalid_inventory_query');
    }
    const afterId =
      query.cursor === undefined
        ? null
        : decodeInventoryCursor(secret, query.cursor, { view: 'compatibility', workspaceId, environmentId });
    const page = await readCompatibilityPage(db, { workspaceId, environmentId, afterId, limit });
    const last = page.items[page.items.length - 1];
    const nextCursor =
      page.hasMore && last ? encodeInventoryCursor(secret, { view: 'compatibility', workspaceId, environmentId, afterId: last.id }) : null;
    return { model: listed.model, items: page.items, nextCursor };
  });
}

/**
 * GET /v1/integrations/{workspaceIntegrationId}: one canonical Integration with both slots.
 * Legacy topologies are 409; an `int_` id, a malformed id or a foreign one is 404.
 */
export async function readIntegration(deps: Deps, principal: WorkspacePrincipal, integrationId: string): Promise<CanonicalIntegration> {
  requireCanonicalWorkspace(principal);
  return inReadSnapshot(deps.pool, async (db) => {
    const topology = await requireModeTopology(db, principal.workspaceId);
    if (!hasIdForm(integrationId, 'wint_')) throw new AppError('integration_not_found');
    const integration = await readCanonicalIntegration(db, principal.workspaceId, integrationId, topology);
    if (!integration) throw new AppError('integration_not_found');
    return integration;
  });
}
