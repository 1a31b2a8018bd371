import { AppError } from '../../shared/errors/index.js';
import { CLI_SCOPES, OFFLINE_ACCESS_SCOPE } from '../auth/scopes.js';

/** 00-decisions §3: the account CLI, a public native client (no secret). */
export const CLI_OAUTH_CLIENT_ID = 'service-management-cli';
/** What the consent page names the client. */
export const CLI_OAUTH_CLIENT_NAME = 'Integration watch CLI';

/** A device code and its user code live 10 minutes (docs/decisions/cli.md). */
export const DEVICE_CODE_LIFETIME_SECONDS = 600;
/** RFC 8628 §3.2 `interval`, and its growth at each `slow_down` (§3.5). */
export const POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_STEP_SECONDS = 5;
/** 03 Limits: CLI access tokens last 15 minutes. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900;
/** A refresh token is good for 30 days; each refresh replaces it with a new one (docs/decisions/cli.md). */
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;

/** 01 Authentication 4: the local setup tool, a second public client of the same device grant. */
export const SETUP_OAUTH_CLIENT_ID = 'service-setup-tool';
export const SETUP_OAUTH_CLIENT_NAME = 'Integration watch setup tool';

/** 01 Authentication 4, 03 "Integration deletion": the setup scopes, in the order grants list them. */
export const SETUP_SCOPES = ['service:setup:contracts:read', 'service:setup:integrations:delete'] as const;
export type SetupScope = (typeof SETUP_SCOPES)[number];

const secretForm = (prefix: string) => new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`);

/**
 * A public client of the device grant, and what differs between them. Secrets are each `prefix`
 * + 43 base64url characters (shared/secrets.ts `newSecret`), with prefixes of their own per
 * client, so that no API key (`svc_api_`), ingest token (`svc_ing_`), session, nor a token of the
 * other client or of another kind can pass for one.
 */
export interface OAuthClientProfile {
  id: string;
  name: string;
  /** The scopes it may ask for, `offline_access` last; at least one other must be asked. */
  grantableScopes: readonly string[];
  /** A setup client's device request names the connection its tokens are bound to. */
  bindsConnection: boolean;
  deviceCodePrefix: string;
  accessTokenPrefix: string;
  refreshTokenPrefix: string;
  deviceCodeForm: RegExp;
  accessTokenForm: RegExp;
  refreshTokenForm: RegExp;
}

function profile(input: Omit<OAuthClientProfile, 'deviceCodeForm' | 'accessTokenForm' | 'refreshTokenForm'>): OAuthClientProfile {
  return {
    ...input,
    deviceCodeForm: secretForm(input.deviceCodePrefix),
    accessTokenForm: secretForm(input.accessTokenPrefix),
    refreshTokenForm: secretForm(input.refreshTokenPrefix),
  };
}

export const CLI_CLIENT = profile({
  id: CLI_OAUTH_CLIENT_ID,
  name: CLI_OAUTH_CLIENT_NAME,
  grantableScopes: [...CLI_SCOPES, OFFLINE_ACCESS_SCOPE],
  bindsConnection: false,
  deviceCodePrefix: 'svc_cli_dc_',
  accessTokenPrefix: 'svc_cli_at_',
  refreshTokenPrefix: 'svc_cli_rt_',
});

export const SETUP_CLIENT = profile({
  id: SETUP_OAUTH_CLIENT_ID,
  name: SETUP_OAUTH_CLIENT_NAME,
  grantableScopes: [...SETUP_SCOPES, OFFLINE_ACCESS_SCOPE],
  bindsConnection: true,
  deviceCodePrefix: 'svc_setup_dc_',
  accessTokenPrefix: 'svc_setup_at_',
  refreshTokenPrefix: 'svc_setup_rt_',
});

const CLIENTS: readonly OAuthClientProfile[] = [CLI_CLIENT, SETUP_CLIENT];

export const DEVICE_CODE_PREFIX = CLI_CLIENT.deviceCodePrefix;
export const ACCESS_TOKEN_PREFIX = CLI_CLIENT.accessTokenPrefix;
export const REFRESH_TOKEN_PREFIX = CLI_CLIENT.refreshTokenPrefix;
export const DEVICE_CODE_FORM = CLI_CLIENT.deviceCodeForm;
export const ACCESS_TOKEN_FORM = CLI_CLIENT.accessTokenForm;
export const REFRESH_TOKEN_FORM = CLI_CLIENT.refreshTokenForm;

/** RFC 6749 §2.2, §3.2.1: a public client names itself with `client_id`; an unknown one or none → 401 `invalid_client`. */
export function requireOAuthClient(clientId: string | undefined): OAuthClientProfile {
  const client = CLIENTS.find((candidate) => candidate.id === clientId);
  if (!client) throw new AppError('invalid_client');
  return client;
}

/** A client by id, for a stored grant (its `oauth_client_id`). */
export function oauthClientById(clientId: string): OAuthClientProfile {
  const client = CLIENTS.find((candidate) => candidate.id === clientId);
  if (!client) throw new Error(`unknown OAuth client ${clientId}`);
  return client;
}

/**
 * A `scope` parameter (RFC 6749 §3.3: space-separated, order and repeats without meaning) as the
 * set it names, in the client's order. 400 `invalid_scope` for a name the client may not ask for
 * (a setup scope for the CLI, a CLI scope for the setup tool), and for a request naming none of
 * its scopes (missing, empty or `offline_access` alone): consent would have no permission to show.
 */
export function parseScope(scope: string | undefined, client: OAuthClientProfile = CLI_CLIENT): string[] {
  const names = new Set((scope ?? '').split(' ').filter((name) => name !== ''));
  for (const name of names) if (!client.grantableScopes.includes(name)) throw new AppError('invalid_scope');
  const scopes = client.grantableScopes.filter((name) => names.has(name));
  if (!scopes.some((name) => name !== OFFLINE_ACCESS_SCOPE)) throw new AppError('invalid_scope');
  return scopes;
}
