// One authentication for the workspace `/v1` management routes (03 Reviewed repairs 5,
// Authentication / Account CLI OAuth 3 and 6): a workspace API key as always, and on the routes
// that allow it an account CLI access token with the route's exact scope plus the workspace
// header, and on the routes that name a setup scope a setup OAuth token of the local setup tool
// (01 Authentication 4). All become one `WorkspacePrincipal`, which the routes read with
// `principalOf`.

import type { FastifyRequest } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { authenticateCliAccessToken } from '../oauth/cliTokens.js';
import type { SetupScope } from '../oauth/rules.js';
import { authenticateSetupAccessToken, isSetupAccessTokenHeader } from '../oauth/setupTokens.js';
import { authenticateApiKey, requireScope } from './apiKeyAuth.js';
import { WORKSPACE_HEADER, cliScope } from './cliApi.js';
import { currentCliWorkspace } from './cliAuth.js';
import type { CliWorkspacePrincipal, WorkspacePrincipal } from './principal.js';
import { declareAuth } from './requirement.js';
import { type WorkspaceScope, isWorkspaceScope } from './scopes.js';

const CLI_ACCESS_TOKEN = /^Bearer svc_cli_at_/;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const CLI_PREFIX = 'service:cli:';

export interface WorkspaceAuthOptions {
  /**
   * `allow`: a CLI access token with `service:cli:<scope>` and `X-Service-Workspace` is accepted.
   * `deny`: a CLI access token is refused with 403 `cli_operation_forbidden` (03 Account CLI
   * OAuth 6: credential operations, Integration creation and mode-connection setup are dashboard
   * setup).
   */
  cli: 'allow' | 'deny';
  /**
   * The setup scope that lets a setup OAuth token call the route (01 Authentication 4), which
   * then checks the token's binding (`requireSetupBinding`). Without it, a valid setup token is
   * 403 `insufficient_scope`: it can list contracts and delete its Integration, nothing else.
   */
  setup?: SetupScope;
}

function workspaceSlugOf(request: FastifyRequest): string {
  const value = request.headers[WORKSPACE_HEADER.toLowerCase()];
  if (typeof value !== 'string' || value === '') throw new AppError('workspace_required');
  return value;
}

/**
 * The CLI caller of a workspace route, in cliAuth's order: the token (401 `unauthenticated`), the
 * route's exact scope (403 `insufficient_scope`), the header (400 `workspace_required`), a current
 * membership of an active workspace (404 `workspace_not_found`), viewers read only (403
 * `cli_operation_forbidden`).
 */
async function authenticateCliCaller(request: FastifyRequest, scope: WorkspaceScope, nowMs: number): Promise<CliWorkspacePrincipal> {
  const { pool } = request.server.deps;
  const token = await authenticateCliAccessToken(pool, request.headers.authorization, nowMs);
  if (!token.scopes.includes(cliScope(scope))) throw new AppError('insufficient_scope');
  const workspace = await currentCliWorkspace(pool, token.userId, workspaceSlugOf(request));
  if (WRITE_METHODS.has(request.method) && workspace.role === 'viewer') throw new AppError('cli_operation_forbidden');
  return {
    kind: 'cli',
    userId: token.userId,
    clientId: token.clientId,
    role: workspace.role,
    workspaceId: workspace.id,
    tenantId: workspace.tenantId,
    accountId: workspace.accountId,
    model: workspace.model,
    scopes: token.scopes.flatMap((name) => {
      const suffix = name.startsWith(CLI_PREFIX) ? name.slice(CLI_PREFIX.length) : '';
      return isWorkspaceScope(suffix) ? [suffix] : [];
    }),
    authEpoch: workspace.authEpoch,
  };
}

/**
 * onRequest hook of a workspace `/v1` route: an API key with `scope` (unchanged: 01
 * Authentication), or, by `options.cli`, a CLI access token accepted with `service:cli:<scope>`
 * or refused with 403 `cli_operation_forbidden` (an invalid CLI token is 401 first).
 */
export function workspaceAuth(scope: WorkspaceScope, options: WorkspaceAuthOptions) {
  return declareAuth(
    async function authenticateWorkspaceCaller(request: FastifyRequest): Promise<void> {
      const { pool, clock } = request.server.deps;
      await clock.sync();
      if (isSetupAccessTokenHeader(request.headers.authorization)) {
        const principal = await authenticateSetupAccessToken(pool, request.headers.authorization, clock.nowMs(), options.setup ?? '');
        if (options.setup === undefined || !principal.setupScopes.includes(options.setup)) throw new AppError('insufficient_scope');
        request.apiKey = principal;
        return;
      }
      if (CLI_ACCESS_TOKEN.test(request.headers.authorization ?? '')) {
        if (options.cli === 'deny') {
          await authenticateCliAccessToken(pool, request.headers.authorization, clock.nowMs());
          throw new AppError('cli_operation_forbidden');
        }
        request.apiKey = await authenticateCliCaller(request, scope, clock.nowMs());
        return;
      }
      const principal = await authenticateApiKey(pool, request.headers.authorization, clock.nowMs());
      requireScope(principal, scope);
      request.apiKey = principal;
    },
    { kind: 'apiKey', scope, cli: options.cli, ...(options.setup ? { setup: options.setup } : {}) },
  );
}

/**
 * 01 Errors' 403 row of `integration_scope_mismatch`, one of its catalogue `otherStatuses`: "setup
 * OAuth lacks the requested Integration". Its 409 row is an `expectedScope` guard (the first status).
 */
export const SETUP_BINDING_STATUS = 403;

/**
 * 01 Authentication 4: a setup token reaches only what it is bound to. Another connection or
 * Integration than its own is 403 `integration_scope_mismatch`, whether or not the other one
 * exists. Other callers pass.
 */
export function requireSetupBinding(
  principal: WorkspacePrincipal,
  target: { connectionId?: string; workspaceIntegrationId?: string },
): void {
  if (principal.kind !== 'setup') return;
  const other =
    (target.connectionId !== undefined && target.connectionId !== principal.connectionId)
    || (target.workspaceIntegrationId !== undefined && target.workspaceIntegrationId !== principal.workspaceIntegrationId);
  if (other) throw new AppError('integration_scope_mismatch', { status: SETUP_BINDING_STATUS });
}
