import pg from 'pg';
import { loadConfig } from '../../shared/config.js';
import type { Queryable } from '../../shared/db/pool.js';
import { sha256Hex } from '../../shared/secrets.js';
import { CLI_OAUTH_CLIENT_ID } from '../../management/oauth/rules.js';

export interface CliLogin {
  accessToken: string;
  refreshToken: string;
  /** The CLI client (`clic_…`) the login created: the CLI session of 03. */
  clientId: string;
}

export interface CliLoginOptions {
  /** The `Origin` of the consent post; the test environment's CONSOLE_ORIGIN by default. */
  origin?: string;
  /** Where the created client's id is looked up; by default a connection of its own to the test database. */
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
  const accessToken = String(tokens.access_token);
  return { accessToken, refreshToken: String(tokens.refresh_token), clientId: await clientIdOf(accessToken, options.db) };
}

async function clientIdOf(accessToken: string, db: Queryable | undefined): Promise<string> {
  const query = 'SELECT client_id FROM cli_tokens WHERE token_hash = $1';
  if (db) return (await db.query<{ client_id: string }>(query, [sha256Hex(accessToken)])).rows[0].client_id;
  const client = new pg.Client({ connectionString: loadConfig(process.env).databaseUrl });
  await client.connect();
  try {
    return (await client.query<{ client_id: string }>(query, [sha256Hex(accessToken)])).rows[0].client_id;
  } finally {
    await client.end();
  }
}
