import type { Queryable } from '../../shared/db/pool.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { newSecret, sha256Hex } from '../../shared/secrets.js';
import type { CliPrincipal } from '../auth/principal.js';
import { OFFLINE_ACCESS_SCOPE } from '../auth/scopes.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import {
  findCurrentAccessToken,
  findRefreshTokenClient,
  findRefreshTokenForUpdate,
  insertCliClient,
  insertCliToken,
  purgeCliTokens,
  revokeAccessToken,
  revokeClientAndTokens,
  spendRefreshToken,
  touchCliClient,
} from './cliTokenStore.js';
import {
  ACCESS_TOKEN_LIFETIME_SECONDS,
  CLI_CLIENT,
  type OAuthClientProfile,
  parseScope,
  REFRESH_TOKEN_LIFETIME_SECONDS,
  requireOAuthClient,
} from './rules.js';
import { currentSetupBinding } from './setupBindingStore.js';

/** RFC 6749 §5.1 token response (00-decisions §3); the only answer that carries CLI tokens. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** Only for a grant with `offline_access`. */
  refresh_token?: string;
  scope: string;
}

/** Expired tokens are deleted a day after they expire. */
const PURGE_AFTER_MS = 24 * 3600 * 1000;

/**
 * A new access token (with `accessScopes`) and, when the grant has `offline_access`, a new refresh
 * token (with the grant's `grantScopes`, RFC 6749 §6) for a grant of `client`, with that client's
 * prefixes; only their hashes are stored.
 */
async function issueTokens(
  db: Queryable,
  client: OAuthClientProfile,
  input: { clientId: string; grantScopes: readonly string[]; accessScopes: readonly string[]; now: Date },
): Promise<TokenResponse> {
  const { clientId, now } = input;
  await purgeCliTokens(db, new Date(now.getTime() - PURGE_AFTER_MS));
  const accessToken = newSecret(client.accessTokenPrefix);
  await insertCliToken(db, {
    tokenHash: sha256Hex(accessToken),
    clientId,
    kind: 'access',
    scopes: input.accessScopes,
    now,
    expiresAt: new Date(now.getTime() + ACCESS_TOKEN_LIFETIME_SECONDS * 1000),
  });
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_LIFETIME_SECONDS,
    scope: input.accessScopes.join(' '),
  };
  if (input.grantScopes.includes(OFFLINE_ACCESS_SCOPE)) {
    const refreshToken = newSecret(client.refreshTokenPrefix);
    await insertCliToken(db, {
      tokenHash: sha256Hex(refreshToken),
      clientId,
      kind: 'refresh',
      scopes: input.grantScopes,
      now,
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_LIFETIME_SECONDS * 1000),
    });
    response.refresh_token = refreshToken;
  }
  return response;
}

/**
 * An approved device login becomes a grant family (a CLI client, or a setup grant bound to its
 * connection) with its first tokens (in the caller's transaction, with the device code marked spent).
 */
export async function openCliClient(
  db: Queryable,
  input: {
    client: OAuthClientProfile;
    userId: string;
    scopes: readonly string[];
    binding: { workspaceId: string; connectionId: string } | null;
    now: Date;
  },
): Promise<{ clientId: string; tokens: TokenResponse }> {
  const { client } = input;
  const clientId = await insertCliClient(db, { ...input, oauthClientId: client.id });
  await recordAudit(db, {
    workspaceId: input.binding?.workspaceId ?? null,
    actorType: 'user',
    actorId: input.userId,
    action: input.binding ? 'setup_client.create' : 'cli_client.create',
    targetId: clientId,
    metadata: input.binding ? { scopes: input.scopes, connectionId: input.binding.connectionId } : { scopes: input.scopes },
    at: input.now,
  });
  const tokens = await issueTokens(db, client, { clientId, grantScopes: input.scopes, accessScopes: input.scopes, now: input.now });
  return { clientId, tokens };
}

export interface RefreshRequest {
  client_id?: string;
  refresh_token?: string;
  scope?: string;
}

/**
 * `grant_type=refresh_token` (RFC 6749 §6, 00-decisions §3). The token rotates on every use: it
 * is spent and a new refresh token and access token are issued. A spent token presented again is
 * taken for a stolen copy (RFC 9700 §4.14.2): the whole grant — the CLI client and every token
 * it holds — is revoked, and the answer is `invalid_grant`. A revoked client (03: revoked or
 * replaced consent), a revoked or expired token are `invalid_grant` too, and so is a setup grant
 * whose approver is no longer an owner or admin of its workspace (the same current consent, 03
 * Account CLI OAuth 2). `scope` may narrow the new access token to part of the grant; the new
 * refresh token keeps the whole grant.
 */
export async function refreshCliTokens(deps: Deps, input: RefreshRequest): Promise<TokenResponse> {
  const client = requireOAuthClient(input.client_id);
  if (input.refresh_token === undefined) throw new AppError('invalid_request');
  if (!client.refreshTokenForm.test(input.refresh_token)) throw new AppError('invalid_grant');
  const requested = input.scope === undefined ? null : parseScope(input.scope, client);
  const tokenHash = sha256Hex(input.refresh_token);
  const now = deps.clock.now();
  const outcome = await withTransaction(deps.pool, async (db): Promise<TokenResponse | 'invalid_grant' | 'invalid_scope'> => {
    const token = await findRefreshTokenForUpdate(db, tokenHash);
    if (!token || token.oauthClientId !== client.id || token.clientRevokedAt !== null || token.revokedAt !== null) return 'invalid_grant';
    if (token.usedAt !== null) {
      await revokeClientAndTokens(db, token.clientId, now);
      // A setup grant's revocation is its workspace's event, as its creation and RFC 7009 revocation are.
      await recordAudit(db, {
        workspaceId: token.workspaceId,
        actorType: 'system',
        actorId: null,
        action: token.workspaceId === null ? 'cli_client.revoke' : 'setup_client.revoke',
        targetId: token.clientId,
        metadata: { reason: 'refresh_token_reuse', userId: token.userId },
        at: now,
      });
      return 'invalid_grant';
    }
    if (token.expiresAt.getTime() <= now.getTime()) return 'invalid_grant';
    // 01 Authentication 4: a setup grant holds while its approver may still approve it. Refused,
    // nothing is spent or revoked: the grant answers again if the role comes back, as its access
    // tokens do. A CLI grant is bound to no workspace: membership is checked on each request.
    if (client.bindsConnection && !(await currentSetupBinding(db, token))) return 'invalid_grant';
    if (requested !== null && !requested.every((scope) => token.scopes.includes(scope))) return 'invalid_scope';
    await spendRefreshToken(db, tokenHash, now);
    await touchCliClient(db, token.clientId, now);
    return issueTokens(db, client, { clientId: token.clientId, grantScopes: token.scopes, accessScopes: requested ?? token.scopes, now });
  });
  // Thrown after the commit, so that a reuse's revocation stays.
  if (typeof outcome === 'string') throw new AppError(outcome);
  return outcome;
}

export interface RevocationRequest {
  client_id?: string;
  token?: string;
  token_type_hint?: string;
}

/**
 * RFC 7009 revocation. A refresh token revokes its grant (the CLI client and all its tokens); an
 * access token revokes itself. The prefix tells the kind, so `token_type_hint` is not needed;
 * an unknown, spent or already revoked token is answered the same way (RFC 7009 §2.2: 200).
 */
export async function revokeCliToken(deps: Deps, input: RevocationRequest): Promise<void> {
  const client = requireOAuthClient(input.client_id);
  const token = input.token;
  if (token === undefined) throw new AppError('invalid_request');
  const now = deps.clock.now();
  if (client.accessTokenForm.test(token)) {
    await revokeAccessToken(deps.pool, client.id, sha256Hex(token), now);
    return;
  }
  if (!client.refreshTokenForm.test(token)) return;
  await withTransaction(deps.pool, async (db) => {
    const grant = await findRefreshTokenClient(db, client.id, sha256Hex(token));
    if (!grant || !(await revokeClientAndTokens(db, grant.clientId, now))) return;
    await recordAudit(db, {
      workspaceId: grant.workspaceId,
      actorType: 'user',
      actorId: grant.userId,
      action: grant.workspaceId === null ? 'cli_client.revoke' : 'setup_client.revoke',
      targetId: grant.clientId,
      metadata: { reason: 'token_revocation' },
      at: now,
    });
  });
}

const BEARER = /^Bearer (\S+)$/;

/**
 * The CLI principal of `Authorization: Bearer svc_cli_at_…` (03 Account CLI OAuth 3, 6): a current
 * access token (15 minutes, not revoked) of a client that is not revoked. Anything else — no
 * header, another scheme, an API key, an ingest, session or setup token, a refresh token, an
 * expired or revoked one — is 401 `unauthenticated`. One indexed read; nothing is written.
 */
export async function authenticateCliAccessToken(
  db: Queryable,
  authorizationHeader: string | undefined,
  nowMs: number,
): Promise<CliPrincipal> {
  const match = BEARER.exec(authorizationHeader ?? '');
  if (!match || !CLI_CLIENT.accessTokenForm.test(match[1])) throw new AppError('unauthenticated');
  const grant = await findCurrentAccessToken(db, CLI_CLIENT.id, sha256Hex(match[1]), new Date(nowMs));
  if (!grant) throw new AppError('unauthenticated');
  return { kind: 'cli', clientId: grant.clientId, userId: grant.userId, scopes: grant.scopes };
}

/**
 * Disables a CLI client and revokes its consent, access and refresh tokens (03: `DELETE
 * /v1/cli/session`, `DELETE /v1/cli/sessions/{clientId}`). Idempotent; the caller checks ownership
 * and writes the audit. `at` is the service clock's now (defaults to the real clock).
 */
export async function revokeCliClient(db: Queryable, clientId: string, at: Date = new Date()): Promise<void> {
  await revokeClientAndTokens(db, clientId, at);
}
