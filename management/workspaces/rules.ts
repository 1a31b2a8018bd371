import { AppError } from '../../shared/errors/index.js';
import type { WorkspaceModel } from './workspaceStore.js';

export const DEVELOPER_ACTIVE_WORKSPACE_CAP = 3;
const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;

/** Workspace names are 2 to 80 characters after trimming (01 Limits). */
export function validWorkspaceName(name: unknown): string {
  if (typeof name !== 'string') throw new AppError('invalid_workspace_name');
  const trimmed = name.trim();
  if ([...trimmed].length < 2 || [...trimmed].length > 80 || /[\u0000-\u001f\u007f]/.test(trimmed))
    throw new AppError('invalid_workspace_name');
  return trimmed;
}

export function isWorkspaceSlug(value: unknown): value is string {
  return typeof value === 'string' && SLUG_PATTERN.test(value);
}

/** Lowercase letters, digits and inner hyphens, 1 to 48 characters (docs/decisions/accounts-and-workspaces.md). */
export function validWorkspaceSlug(slug: unknown): string {
  if (!isWorkspaceSlug(slug)) throw new AppError('invalid_workspace_slug');
  return slug;
}

/** Derives a slug from a name; names without any letter or digit give `workspace`. */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  return base || 'workspace';
}

/**
 * The canonical `/v1` routes (and the legacy credential writers) serve canonical workspaces only:
 * a legacy workspace has no way to gain a connection, so it answers 409 `workspace_modes_unavailable`.
 */
export function requireCanonicalWorkspace(workspace: { model: WorkspaceModel }): void {
  if (workspace.model !== 'canonical') throw new AppError('workspace_modes_unavailable');
}

/** Active workspaces an account's plan allows; null when the plan sets no cap (01 Limits). */
export function activeWorkspaceLimit(plan: string): number | null {
  return plan === 'developer' ? DEVELOPER_ACTIVE_WORKSPACE_CAP : null;
}
