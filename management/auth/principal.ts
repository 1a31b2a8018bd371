import type { WorkspaceScope } from './scopes.js';

/** The caller of a `/v1` route: a workspace API key, current-checked on this request. */
export interface ApiKeyPrincipal {
  kind: 'api_key';
  keyId: string;
  workspaceId: string;
  tenantId: string;
  accountId: string;
  model: 'canonical' | 'legacy';
  scopes: readonly WorkspaceScope[];
  /** The workspace authorization epoch seen when the request was authenticated. */
  authEpoch: string;
}

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
export type OperationActor = ApiKeyPrincipal | WorkspaceUserActor;

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyPrincipal;
    session?: SessionPrincipal;
  }
}
