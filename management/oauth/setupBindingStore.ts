import type { Queryable } from '../../shared/db/pool.js';

/**
 * The connection a setup grant is bound to (01 Authentication 4: one environment and one approved
 * Integration), as the consenting or presenting user sees it: live, in an active workspace, with
 * the user's role there (null for a non-member).
 */
export interface SetupConnection {
  connectionId: string;
  workspaceId: string;
  workspaceSlug: string;
  /** The shared Integration (`wint_…`). */
  workspaceIntegrationId: string;
  integrationName: string;
  environmentId: string;
  environmentName: string;
  mode: 'sandbox' | 'live';
  role: 'owner' | 'admin' | 'viewer' | null;
}

interface Row {
  connection_id: string;
  workspace_id: string;
  workspace_slug: string;
  integration_id: string;
  integration_name: string;
  environment_id: string;
  environment_name: string;
  mode: 'sandbox' | 'live';
  role: 'owner' | 'admin' | 'viewer' | null;
}

/**
 * The live connection `connectionId` of an active workspace with `userId`'s role there, or null.
 * `includeDeleted`: a deleted connection or Integration too (a grant outlives what it deleted, so
 * that its tool can still replay the confirmation and read the receipt).
 */
export async function findSetupConnection(
  db: Queryable,
  connectionId: string,
  userId: string,
  options: { includeDeleted?: boolean } = {},
): Promise<SetupConnection | null> {
  const live = options.includeDeleted ? '' : ' AND c.deleted_at IS NULL AND i.deleted_at IS NULL';
  const { rows } = await db.query<Row>(
    `SELECT c.id AS connection_id, w.id AS workspace_id, w.slug AS workspace_slug, i.id AS integration_id,
            i.name AS integration_name, e.id AS environment_id, e.name AS environment_name, c.mode, m.role
       FROM connections c
       JOIN integrations i ON i.id = c.integration_id
       JOIN environments e ON e.id = c.environment_id
       JOIN workspaces w ON w.id = c.workspace_id
       LEFT JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = $2
      WHERE c.id = $1 AND w.status = 'active'${live}`,
    [connectionId, userId],
  );
  const row = rows[0];
  return row
    ? {
        connectionId: row.connection_id,
        workspaceId: row.workspace_id,
        workspaceSlug: row.workspace_slug,
        workspaceIntegrationId: row.integration_id,
        integrationName: row.integration_name,
        environmentId: row.environment_id,
        environmentName: row.environment_name,
        mode: row.mode,
        role: row.role,
      }
    : null;
}

/** A workspace owner or admin may approve a setup grant (a viewer may not write, 03 Account CLI OAuth). */
export const mayApproveSetup = (connection: SetupConnection | null): connection is SetupConnection =>
  connection !== null && (connection.role === 'owner' || connection.role === 'admin');

/**
 * The bound connection of a setup grant while the grant holds (01 Authentication 4): its approver
 * still an owner or admin of the bound workspace, which is active. Null otherwise, and for a grant
 * bound to nothing (the CLI's). A deleted bound connection still holds: the grant outlives what it
 * deleted. Read on every request of its access tokens and at every refresh.
 */
export async function currentSetupBinding(
  db: Queryable,
  grant: { userId: string; workspaceId: string | null; connectionId: string | null },
): Promise<SetupConnection | null> {
  if (grant.workspaceId === null || grant.connectionId === null) return null;
  const connection = await findSetupConnection(db, grant.connectionId, grant.userId, { includeDeleted: true });
  return mayApproveSetup(connection) && connection.workspaceId === grant.workspaceId ? connection : null;
}
