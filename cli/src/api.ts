// The management plane's API as commands use it: one request at a time, the access token of the
// profile's login (refreshed by the token source when it is about to expire or was refused), the
// workspace header on workspace routes, and the service's error code turned into a CliError.

import { CliError, EXIT, recoveryOf } from './errors.js';

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path and query, e.g. `/v1/cli/workspaces?limit=100`. */
  path: string;
  body?: unknown;
  /** Sends `X-Service-Workspace` with this slug (workspace routes, 03 Endpoints). */
  workspace?: string;
  /** Sends `Idempotency-Key` (keyed writes); see idempotency.ts for how a retry reuses it. */
  idempotencyKey?: string;
}

/** Where the API client gets a current access token (auth/tokenSource.ts). */
export interface TokenSource {
  /** A current access token, refreshed first when it expires within a minute. */
  accessToken(): Promise<string>;
  /** Called once after a 401 for `token`: refreshes (unless another process already did) and returns the new one. */
  refreshAfterRefusal(token: string): Promise<string>;
}

export interface ApiClient {
  readonly baseUrl: string;
  request<T = Record<string, unknown>>(request: ApiRequest): Promise<T>;
}

/** An error answer of the service: its status, its catalogue code and its body. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    code: string | undefined,
    body: Record<string, unknown>,
  ) {
    super(`${code ?? `HTTP ${status}`}: ${recoveryOf(code, status)}`, status === 401 ? EXIT.authentication : EXIT.failure, code, body);
  }
}

export function createApiClient(baseUrl: string, tokens: TokenSource): ApiClient {
  async function send(request: ApiRequest, token: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (request.workspace !== undefined) headers['x-service-workspace'] = request.workspace;
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
    try {
      return await fetch(new URL(request.path, baseUrl), {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        redirect: 'error',
      });
    } catch (error) {
      throw new CliError(`cannot reach ${baseUrl}: ${(error as Error).message}`);
    }
  }

  return {
    baseUrl,
    async request<T>(request: ApiRequest): Promise<T> {
      let token = await tokens.accessToken();
      let response = await send(request, token);
      if (response.status === 401) {
        token = await tokens.refreshAfterRefusal(token);
        response = await send(request, token);
      }
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch {
        throw new CliError(`the service answered ${response.status} with something that is not JSON`);
      }
      if (!response.ok) throw new ApiError(response.status, typeof body.error === 'string' ? body.error : undefined, body);
      return body as T;
    },
  };
}
