import type { FastifyRequest } from 'fastify';
import { cliPrincipalOf, cliWorkspaceOf } from '../auth/cliAuth.js';
import type { CliWorkspacePrincipal, WorkspaceUserActor } from '../auth/principal.js';
import { isWorkspaceScope, type WorkspaceScope } from '../auth/scopes.js';

const CLI_PREFIX = 'service:cli:';

/**
 * A signed-in owner or admin deciding through the console (issue 31): the user and no CLI client.
 * Their previews, approvals, receipts and audit rows name the user with a null client, so only
 * the same user, from the console, applies or reads them.
 */
export interface ConsoleRepairActor extends WorkspaceUserActor {
  clientId: null;
}

/**
 * The performer of a repair operation: a user through one CLI client, or through the console.
 * The user and the client (or its absence) own the receipt together.
 */
export type RepairActor = CliWorkspacePrincipal | ConsoleRepairActor;

/**
 * The performer of a CLI repair operation (runOperation): the user's current membership of the
 * workspace of `X-Service-Workspace`, through the CLI client of the access token, as cliAuth
 * established it for this request. The user and the client own the receipt together.
 */
export function cliOperationActor(request: FastifyRequest): CliWorkspacePrincipal {
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
    scopes: principal.scopes.flatMap((name): WorkspaceScope[] => {
      const suffix = name.startsWith(CLI_PREFIX) ? name.slice(CLI_PREFIX.length) : '';
      return isWorkspaceScope(suffix) ? [suffix] : [];
    }),
    authEpoch: workspace.authEpoch,
  };
}

/** The performer of a console repair operation: the signed-in owner or admin, no CLI client. */
export function consoleOperationActor(actor: WorkspaceUserActor): ConsoleRepairActor {
  return { ...actor, clientId: null };
}
