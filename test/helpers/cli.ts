import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { WORKSPACE_HEADER, cliScope } from '../../management/auth/cliApi.js';
import { CLI_SCOPE_SUFFIXES, type CliScopeSuffix } from '../../management/auth/scopes.js';
import { cliLogin, type CliLogin } from './cliLogin.js';
import type { TestContext } from './context.js';

/** Serves the test app on a loopback port (the device grant runs over real HTTP) and returns its base URL. */
export async function serveOnLoopback(ctx: TestContext): Promise<string> {
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
}

export type CliSession = CliLogin;

/**
 * Signs the CLI in through the real device grant (test/helpers/cliLogin.ts) for the user of
 * `sessionToken`, with the given scope suffixes (all by default) and `offline_access`.
 */
export function loginCli(
  baseUrl: string,
  sessionToken: string,
  suffixes: readonly CliScopeSuffix[] = CLI_SCOPE_SUFFIXES,
): Promise<CliSession> {
  return cliLogin(baseUrl, sessionToken, suffixes.map(cliScope));
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * Calls a route with a CLI access token (null: none) and, when given, `X-Service-Workspace`, a
 * JSON body and an Idempotency-Key.
 */
export function callCli(
  ctx: TestContext,
  token: string | null,
  method: Method,
  url: string,
  options: { workspace?: string; headers?: Record<string, string>; body?: unknown; idempotencyKey?: string } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.workspace !== undefined) headers[WORKSPACE_HEADER] = options.workspace;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return ctx.app.inject({ method, url, headers, ...(options.body === undefined ? {} : { payload: options.body as object }) });
}

/**
 * What a CLI request could write: the newest audit row, the user's CLI clients and tokens, the
 * workspace's operations and incidents. Equal before and after a refused request proves it wrote
 * nothing (authentication itself writes nothing: management/oauth/cliTokens.ts).
 */
export async function cliWriteState(ctx: TestContext, userId: string): Promise<unknown> {
  const { rows } = await ctx.deps.pool.query(
    `SELECT (SELECT max(id) FROM audit_events) AS audit,
            (SELECT count(*) FROM operations) AS operations,
            (SELECT max(updated_at) FROM incidents) AS incidents,
            (SELECT json_agg(json_build_array(c.id, c.revoked_at, c.last_used_at) ORDER BY c.id) FROM cli_clients c WHERE c.user_id = $1) AS clients,
            (SELECT json_agg(json_build_array(t.token_hash, t.revoked_at, t.used_at) ORDER BY t.token_hash)
               FROM cli_tokens t JOIN cli_clients c ON c.id = t.client_id WHERE c.user_id = $1) AS tokens`,
    [userId],
  );
  return rows[0];
}
