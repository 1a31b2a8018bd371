// The service's OAuth endpoints as openid-client 6 drives them (00-decisions §3): the CLI is the
// public client `service-management-cli` (no secret), and the service publishes no discovery
// document, so the client is configured with the endpoints themselves. openid-client is loaded
// only by login, refresh and logout.

import type { Configuration } from 'openid-client';
import { CliError } from '../errors.js';

export const CLIENT_ID = 'service-management-cli';

/** 03 Authentication 4: the twelve scope suffixes, all asked for by default. */
export const CLI_SCOPE_SUFFIXES = [
  'integrations:read',
  'integrations:manage',
  'contracts:read',
  'contracts:write',
  'contracts:activate',
  'observations:read',
  'incidents:read',
  'repairs:read',
  'repairs:create',
  'repairs:approve',
  'repairs:export',
  'replays:read',
] as const;

const SCOPE_PREFIX = 'service:cli:';

/**
 * The scope of a login: the given suffixes or full names (all twelve when none), always with
 * `offline_access` (the refresh token; without it a login lasts 15 minutes).
 */
export function loginScope(requested: readonly string[] | undefined): string {
  const names = (requested === undefined || requested.length === 0 ? [...CLI_SCOPE_SUFFIXES] : requested).map((name) =>
    name.startsWith(SCOPE_PREFIX) ? name.slice(SCOPE_PREFIX.length) : name,
  );
  const unknown = names.filter((name) => name !== 'offline_access' && !(CLI_SCOPE_SUFFIXES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new CliError(`unknown scope ${unknown.map((name) => `"${name}"`).join(', ')}: choose among ${CLI_SCOPE_SUFFIXES.join(', ')}`);
  }
  const chosen = CLI_SCOPE_SUFFIXES.filter((suffix) => names.includes(suffix)).map((suffix) => `${SCOPE_PREFIX}${suffix}`);
  if (chosen.length === 0) throw new CliError('name at least one scope besides offline_access');
  return [...chosen, 'offline_access'].join(' ');
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * 03 Account CLI OAuth 6: tokens go only to the service's own origin. Plain http is accepted for a
 * service on this machine (loopback) only, or when IW_ALLOW_HTTP=1 says the network is trusted.
 */
export function checkTransport(baseUrl: string): void {
  const url = new URL(baseUrl);
  if (url.protocol === 'https:') return;
  if (LOOPBACK.has(url.hostname) || url.hostname.startsWith('127.') || process.env.IW_ALLOW_HTTP === '1') return;
  throw new CliError(
    `refusing to send credentials over plain http to ${url.origin}: use https, or set IW_ALLOW_HTTP=1 if this network is trusted`,
  );
}

export async function oauthConfiguration(baseUrl: string): Promise<{ client: typeof import('openid-client'); config: Configuration }> {
  checkTransport(baseUrl);
  const client = await import('openid-client');
  const config = new client.Configuration(
    {
      issuer: baseUrl,
      device_authorization_endpoint: `${baseUrl}/oauth/device/code`,
      token_endpoint: `${baseUrl}/oauth/token`,
      revocation_endpoint: `${baseUrl}/oauth/revoke`,
    },
    CLIENT_ID,
    undefined,
    client.None(),
  );
  if (new URL(baseUrl).protocol === 'http:') client.allowInsecureRequests(config);
  return { client, config };
}

/** The OAuth error code of a failure of openid-client (`invalid_grant`, `access_denied`…), if the server answered one. */
export function oauthErrorCode(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'error' in error && typeof (error as { error: unknown }).error === 'string') {
    return (error as { error: string }).error;
  }
  return undefined;
}

/** A failure that is not an OAuth answer: the service could not be reached or answered nonsense. */
export function transportError(baseUrl: string, error: unknown): CliError {
  const cause = (error as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : (error as Error).message;
  return new CliError(`cannot complete the OAuth request to ${baseUrl}: ${detail}`);
}
