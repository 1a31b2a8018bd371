import type { FastifyRequest } from 'fastify';
import { cliPrincipalOf, cliWorkspaceOf } from '../auth/cliAuth.js';
import { cliScope } from '../auth/cliApi.js';
import type { CliWorkspacePrincipal } from '../auth/principal.js';
import { type CliScopeSuffix, isWorkspaceScope } from '../auth/scopes.js';

const CLI_PREFIX = 'service:cli:';

/**
 * The caller of a reviewed-repair route as the operation machinery knows it: the user's current
 * membership of the workspace named by `X-Service-Workspace`, through one CLI client. What it
 * previews, applies or exports belongs to that user and client together, under the workspace
 * authorization epoch and role seen on this request.
 */
export function cliActorOf(request: FastifyRequest): CliWorkspacePrincipal {
  const principal = cliPrincipalOf(request);
  const workspace = cliWorkspaceOf(request);
  return {
    kind: 'cli',
    userId: principal.userId,
    clientId: principal.clientId,
    role: workspace.role,
    workspaceId: workspace.id,
    tenantId: workspace.tenantId,
    accountId: workspace.accountId,
    model: workspace.model,
    scopes: principal.scopes.flatMap((name) => {
      const suffix = name.startsWith(CLI_PREFIX) ? name.slice(CLI_PREFIX.length) : '';
      return isWorkspaceScope(suffix) ? [suffix] : [];
    }),
    authEpoch: workspace.authEpoch,
  };
}

/** Whether the CLI token of the request carries `service:cli:` + `suffix`. */
export function hasCliScope(request: FastifyRequest, suffix: CliScopeSuffix): boolean {
  return cliPrincipalOf(request).scopes.includes(cliScope(suffix));
}
