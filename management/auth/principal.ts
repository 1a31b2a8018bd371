import type { WorkspaceScope } from './scopes.js';

/** What every caller of a workspace `/v1` route carries, whichever credential it presented. */
interface WorkspaceCaller {
  workspaceId: string;
  tenantId: string;
  accountId: string;
  model: 'canonical' | 'legacy';
  /**
   * The workspace API key scope names the caller holds (for a CLI token, its `service:cli:`
   * scopes without the prefix), so route code reads one set of names.
   */
  scopes: readonly WorkspaceScope[];
  /** The workspace authorization epoch seen when the request was authenticated. */
  authEpoch: string;
}

/** The caller of a `/v1` route: a workspace API key, current-checked on this request. */
export interface ApiKeyPrincipal extends WorkspaceCaller {
  kind: 'api_key';
  keyId: string;
}

/**
 * The caller of a `/v1` route through an account CLI access token (03 Reviewed repairs 5): the
 * user's current membership of the workspace named by `X-Service-Workspace`, through one CLI
 * client. A receipt it makes is owned by that user and that client together.
 */
export interface CliWorkspacePrincipal extends WorkspaceCaller {
  kind: 'cli';
  userId: string;
  /** The CLI client (`clic_…`) whose access token made the request. */
  clientId: string;
  role: 'owner' | 'admin' | 'viewer';
}

/**
 * The caller of a `/v1` route through a setup OAuth token of the local setup tool (01
 * Authentication 4): a grant bound to one connection (one approved Integration in one
 * environment) of one workspace, whose approver is still an owner or admin there. Only the
 * routes that name a setup scope accept it (workspaceAuth.ts `setup`); `scopes` is empty, so no
 * check by workspace scope ever passes for it.
 */
export interface SetupWorkspacePrincipal extends WorkspaceCaller {
  kind: 'setup';
  userId: string;
  /** The setup grant (`clic_…`, a row of `cli_clients` of the client `service-setup-tool`). */
  clientId: string;
  /** The token's full setup scope names (`service:setup:contracts:read`, …). */
  setupScopes: readonly string[];
  /** The setup scope the route admitted it with; what an in-transaction recheck looks for. */
  admittedScope: string;
  /** The bound connection (`int_…`), its shared Integration (`wint_…`) and environment. */
  connectionId: string;
  workspaceIntegrationId: string;
  environmentId: string;
}

/** The caller of a workspace `/v1` route: an API key, a CLI token or a setup token (management/auth/workspaceAuth.ts). */
export type WorkspacePrincipal = ApiKeyPrincipal | CliWorkspacePrincipal | SetupWorkspacePrincipal;

/** The caller of a console route: a signed-in user with a current session. */
export interface SessionPrincipal {
  kind: 'session';
  sessionId: string;
  userId: string;
  email: string;
  emailVerified: boolean;
}

/**
 * The caller of a `/v1/cli` route: a current access token of a CLI client that is not revoked
 * (management/oauth/cliTokens.ts `authenticateCliAccessToken`). `scopes` are the token's full scope
 * names (`service:cli:contracts:read`, and `offline_access` when the grant has it); workspace
 * membership and role are checked by each route, not here.
 */
export interface CliPrincipal {
  kind: 'cli';
  /** The CLI client (`clic_…`): the CLI session of 03, one per approved device login. */
  clientId: string;
  userId: string;
  scopes: readonly string[];
}

/**
 * A console user acting in one workspace as its owner or admin (02 Authentication 4): the
 * session-side performer of an operation, who alone may replay and read its receipt.
 */
export interface WorkspaceUserActor {
  kind: 'workspace_user';
  userId: string;
  /** The session the user acts through; it must still be current when the operation commits. */
  sessionId: string;
  workspaceId: string;
  /** The workspace's billing account (fixed for its life): the hash tag of its Redis keys. */
  accountId: string;
  role: 'owner' | 'admin';
  model: 'canonical' | 'legacy';
  /** The workspace authorization epoch seen when the actor was loaded. */
  authEpoch: string;
}

/** Whoever performs and owns an operation (operations/idempotency.ts). */
export type OperationActor = WorkspacePrincipal | WorkspaceUserActor;

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: WorkspacePrincipal;
    session?: SessionPrincipal;
  }
}
