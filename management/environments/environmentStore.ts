import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import type { EnvironmentCategory, EnvironmentRecord, WorkspaceModel } from '../workspaces/workspaceStore.js';

export type Mode = 'sandbox' | 'live';

interface EnvironmentRow {
  id: string;
  name: string;
  slug: string;
  category: EnvironmentCategory;
  mode: Mode;
  is_default: boolean;
}

const toEnvironment = (row: EnvironmentRow): EnvironmentRecord => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  category: row.category,
  mode: row.mode,
  isDefault: row.is_default,
});

/** The workspace's environments ordered by id (01 GET /v1/environments), with its topology model. */
export async function listWorkspaceEnvironments(
  db: Queryable,
  workspaceId: string,
): Promise<{ model: WorkspaceModel; environments: EnvironmentRecord[] } | null> {
  const workspace = await db.query<{ model: WorkspaceModel }>('SELECT model FROM workspaces WHERE id = $1', [workspaceId]);
  if (!workspace.rows[0]) return null;
  const { rows } = await db.query<EnvironmentRow>(
    `SELECT id, name, slug, category, mode, is_default FROM environments
      WHERE workspace_id = $1 ORDER BY id COLLATE "C" LIMIT 100`,
    [workspaceId],
  );
  return { model: workspace.rows[0].model, environments: rows.map(toEnvironment) };
}

/** The exact Sandbox and Live environments of a canonical workspace. */
export type ModeTopology = Record<Mode, EnvironmentRecord>;

/**
 * 01 Resources: a canonical workspace has exactly two modes, Sandbox and Live, each bound to one
 * environment. Returns them, or null for a legacy, incomplete or mixed topology (the
 * `workspace_modes_unavailable` cases of 01 Errors).
 */
export async function resolveModeTopology(db: Queryable, workspaceId: string): Promise<ModeTopology | null> {
  const listed = await listWorkspaceEnvironments(db, workspaceId);
  if (listed?.model !== 'canonical') return null;
  const sandbox = listed.environments.filter((environment) => environment.category === 'sandbox' && environment.mode === 'sandbox');
  const live = listed.environments.filter((environment) => environment.category === 'live' && environment.mode === 'live');
  if (sandbox.length !== 1 || live.length !== 1 || listed.environments.length !== 2) return null;
  return { sandbox: sandbox[0], live: live[0] };
}

/** The workspace's Sandbox and Live environments, or 409 `workspace_modes_unavailable`. */
export async function requireModeTopology(db: Queryable, workspaceId: string): Promise<ModeTopology> {
  const topology = await resolveModeTopology(db, workspaceId);
  if (!topology) throw new AppError('workspace_modes_unavailable');
  return topology;
}

/** One environment of the workspace by exact id, or null (another workspace's id included). */
export async function findWorkspaceEnvironment(
  db: Queryable,
  workspaceId: string,
  environmentId: string,
): Promise<EnvironmentRecord | null> {
  const { rows } = await db.query<EnvironmentRow>(
    'SELECT id, name, slug, category, mode, is_default FROM environments WHERE id = $1 AND workspace_id = $2',
    [environmentId, workspaceId],
  );
  return rows[0] ? toEnvironment(rows[0]) : null;
}
