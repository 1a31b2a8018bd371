import { loadConfig } from '../../shared/config.js';
import type { Queryable } from '../../shared/db/pool.js';
import { sha256Hex } from '../../shared/secrets.js';
import { CLI_OAUTH_CLIENT_ID } from '../../management/oauth/rules.js';

export interface CliLogin {
  accessToken: string;
  refreshToken: string;
  /** The CLI client (`clic_…`) the login created; given when `options.db` is. */
  clientId?: string;
}

export interface CliLoginOptions {
  /** The `Origin` of the consent post; the test environment's CONSOLE_ORIGIN by default. */
  origin?: string;
  /** When given, the created client's id is looked up in it. */
  db?: Queryable;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`POST ${new URL(url).pathname} → ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/**
 * A CLI login through the real device grant over HTTP, as a user with a console session would do
 * it: device code for `scopes` (full names, e.g. `service:cli:contracts:read`; `offline_access` is
 * added), consent with the session cookie and a same-origin `Origin`, then the token exchange.
 * `baseUrl` is a listening management plane (`http://127.0.0.1:port`).
 */
export async function cliLogin(
  baseUrl: string,
  sessionToken: string,
  scopes: readonly string[],
  options: CliLoginOptions = {},
): Promise<CliLogin> {
  const scope = [...new Set([...scopes, 'offline_access'])].join(' ');
  const device = await post(`${baseUrl}/oauth/device/code`, { client_id: CLI_OAUTH_CLIENT_ID, scope });
  const origin = options.origin ?? loadConfig(process.env).consoleOrigin;
  await post(
    `${baseUrl}/oauth/device/consent`,
    { user_code: device.user_code, decision: 'approve' },
    { cookie: `session=${sessionToken}`, origin },
  );
  const tokens = await post(`${baseUrl}/oauth/token`, {
    grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    device_code: device.device_code,
    client_id: CLI_OAUTH_CLIENT_ID,
  });
  const login: CliLogin = { accessToken: String(tokens.access_token), refreshToken: String(tokens.refresh_token) };
  if (options.db) {
    const { rows } = await options.db.query<{ client_id: string }>('SELECT client_id FROM cli_tokens WHERE token_hash = $1', [
      sha256Hex(login.accessToken),
    ]);
    login.clientId = rows[0]?.client_id;
  }
  return login;
}
