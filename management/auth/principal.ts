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

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyPrincipal;
    session?: SessionPrincipal;
  }
}
