import { AppError } from '../../shared/errors/index.js';
import { CLI_SCOPES, OFFLINE_ACCESS_SCOPE } from '../auth/scopes.js';

/** 00-decisions §3: the account CLI, a public native client (no secret); the only client there is. */
export const CLI_OAUTH_CLIENT_ID = 'service-management-cli';
/** What the consent page names the client. */
export const CLI_OAUTH_CLIENT_NAME = 'Integration watch CLI';

/** A device code and its user code live 10 minutes (docs/decisions/cli-oauth.md). */
export const DEVICE_CODE_LIFETIME_SECONDS = 600;
/** RFC 8628 §3.2 `interval`, and its growth at each `slow_down` (§3.5). */
export const POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_STEP_SECONDS = 5;
/** 03 Limits: CLI access tokens last 15 minutes. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 900;
/** A refresh token is good for 30 days; each refresh replaces it with a new one (docs/decisions/cli-oauth.md). */
export const REFRESH_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;

/**
 * Secrets of the grant, each `prefix` + 43 base64url characters (shared/secrets.ts `newSecret`):
 * prefixes of their own, so that no API key (`svc_api_`), ingest token (`svc_ing_`), session or
 * setup token can pass for one, nor one kind of CLI token for another.
 */
export const DEVICE_CODE_PREFIX = 'svc_cli_dc_';
export const ACCESS_TOKEN_PREFIX = 'svc_cli_at_';
export const REFRESH_TOKEN_PREFIX = 'svc_cli_rt_';

const secretForm = (prefix: string) => new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`);
export const DEVICE_CODE_FORM = secretForm(DEVICE_CODE_PREFIX);
export const ACCESS_TOKEN_FORM = secretForm(ACCESS_TOKEN_PREFIX);
export const REFRESH_TOKEN_FORM = secretForm(REFRESH_TOKEN_PREFIX);

/** RFC 6749 §2.2, §3.2.1: the public client names itself with `client_id`; any other or none → 401 `invalid_client`. */
export function requireCliOAuthClient(clientId: string | undefined): void {
  if (clientId !== CLI_OAUTH_CLIENT_ID) throw new AppError('invalid_client');
}

/** Every scope the CLI may ask for, in the order grants list them. */
const GRANTABLE_SCOPES: readonly string[] = [...CLI_SCOPES, OFFLINE_ACCESS_SCOPE];

/**
 * A `scope` parameter (RFC 6749 §3.3: space-separated, order and repeats without meaning) as the
 * set it names, in catalogue order. 400 `invalid_scope` for a name that is not one of the twelve
 * CLI scopes or `offline_access`, and for a request naming no CLI scope at all (missing, empty
 * or `offline_access` alone): consent would have no permission to show.
 */
export function parseScope(scope: string | undefined): string[] {
  const names = new Set((scope ?? '').split(' ').filter((name) => name !== ''));
  for (const name of names) if (!GRANTABLE_SCOPES.includes(name)) throw new AppError('invalid_scope');
  const scopes = GRANTABLE_SCOPES.filter((name) => names.has(name));
  if (!scopes.some((name) => name !== OFFLINE_ACCESS_SCOPE)) throw new AppError('invalid_scope');
  return scopes;
}
