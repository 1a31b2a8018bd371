import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { rejectPausedWrite } from '../maintenance.js';
import { authenticateCliAccessToken } from '../oauth/cliTokens.js';
import { isWorkspaceSlug } from '../workspaces/rules.js';
import type { MemberRole, WorkspaceModel } from '../workspaces/workspaceStore.js';
import { WORKSPACE_HEADER, cliScope } from './cliApi.js';
import type { CliPrincipal } from './principal.js';
import { declareAuth } from './requirement.js';
import type { CliScopeSuffix } from './scopes.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The workspace of a CLI workspace request, as the user's current membership shows it. */
export interface CliWorkspace {
  id: string;
  slug: string;
  accountId: string;
  tenantId: string;
  model: WorkspaceModel;
  role: MemberRole;
  /** The workspace authorization epoch seen when the request was authenticated. */
  authEpoch: string;
}

/** What the CLI hook established for this request. */
export interface CliRequestAuth {
  principal: CliPrincipal;
  /** Null on account routes, which take no workspace header. */
  workspace: CliWorkspace | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    cli?: CliRequestAuth;
  }
}

export interface CliAuthOptions {
  /** The scope suffix the route requires; absent on account routes (any CLI access token). */
  scope?: CliScopeSuffix;
  /** The route acts in the workspace named by `X-Service-Workspace`. */
  workspace?: boolean;
}

interface MembershipRow {
  id: string;
  slug: string;
  account_id: string;
  tenant_id: string;
  model: WorkspaceModel;
  role: MemberRole;
  auth_epoch: string;
}

/**
 * The user's current membership of the active workspace with this slug, or 404
 * `workspace_not_found`: a missing, archived or foreign workspace, and one the user was removed
 * from, look the same (03 Console-facing identifiers: foreign workspaces answer 404, never 403;
 * Account CLI OAuth 7: archiving or removal withdraws CLI access at once).
 */
export async function currentCliWorkspace(db: Queryable, userId: string, slug: string): Promise<CliWorkspace> {
  // A value that cannot be a slug names no workspace (and may hold bytes PostgreSQL refuses).
  const { rows } = isWorkspaceSlug(slug)
    ? await db.query<MembershipRow>(
        `SELECT w.id, w.slug, w.account_id, w.tenant_id, w.model, w.auth_epoch, m.role
           FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
          WHERE w.slug = $1 AND m.user_id = $2 AND w.status = 'active'`,
        [slug, userId],
      )
    : { rows: [] as MembershipRow[] };
  const row = rows[0];
  if (!row) throw new AppError('workspace_not_found');
  return {
    id: row.id,
    slug: row.slug,
    accountId: row.account_id,
    tenantId: row.tenant_id,
    model: row.model,
    role: row.role,
    authEpoch: String(row.auth_epoch),
  };
}

function workspaceSlugOf(request: FastifyRequest): string {
  const value = request.headers[WORKSPACE_HEADER.toLowerCase()];
  if (typeof value !== 'string' || value === '') throw new AppError('workspace_required');
  return value;
}

/**
 * onRequest hook of the account CLI API (03 Authentication, Account CLI OAuth). In order:
 * `Authorization: Bearer <CLI access token>` (401 `unauthenticated`; API keys, ingest tokens and
 * session cookies are not CLI tokens), the route's exact scope (403 `insufficient_scope`), then on
 * workspace routes the `X-Service-Workspace` header (400 `workspace_required`) naming an active
 * workspace where the user is a current member, read again on every request (404
 * `workspace_not_found`), and viewers read only (403 `cli_operation_forbidden` on a write).
 * Writes then meet the maintenance pause.
 */
export function cliAuth(options: CliAuthOptions = {}) {
  const scope = options.scope ?? null;
  const workspaceRoute = options.workspace === true;
  return declareAuth(
    async function authenticateCli(request: FastifyRequest): Promise<void> {
      const { pool, clock } = request.server.deps;
      await clock.sync();
      const principal = await authenticateCliAccessToken(pool, request.headers.authorization, clock.nowMs());
      if (scope !== null && !principal.scopes.includes(cliScope(scope))) throw new AppError('insufficient_scope');
      const write = WRITE_METHODS.has(request.method);
      let workspace: CliWorkspace | null = null;
      if (workspaceRoute) {
        workspace = await currentCliWorkspace(pool, principal.userId, workspaceSlugOf(request));
        if (write && workspace.role === 'viewer') throw new AppError('cli_operation_forbidden');
      }
      request.cli = { principal, workspace };
      await rejectPausedWrite(request);
    },
    { kind: 'cli', scope, workspace: workspaceRoute },
  );
}

/** The CLI caller of a route that declared `cliAuth`. */
export function cliPrincipalOf(request: FastifyRequest): CliPrincipal {
  if (!request.cli) throw new Error('route is missing cliAuth');
  return request.cli.principal;
}

/** The workspace of a route that declared `cliAuth({ workspace: true })`. */
export function cliWorkspaceOf(request: FastifyRequest): CliWorkspace {
  if (!request.cli?.workspace) throw new Error('route is missing cliAuth({ workspace: true })');
  return request.cli.workspace;
}
