import type { RouteOptions } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode } from '../../shared/errors/index.js';
import { WORKSPACE_HEADER, cliScope } from '../auth/cliApi.js';
import { authRequirementOf, type AuthRequirement } from '../auth/requirement.js';
import { SETUP_BINDING_STATUS } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';

export const API_KEY_SCHEME = 'apiKey';
export const SESSION_SCHEME = 'session';
export const CLI_SCHEME = 'cli';
export const SETUP_SCHEME = 'setup';
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the API reference says of one route beyond its JSON Schemas. */
export interface RouteDocs {
  security: Record<string, string[]>[];
  /**
   * `x-scopes`: the API key scope the route requires, `session` for console routes, the CLI scope
   * (`service:cli:…`) or `cli` (any CLI access token) for CLI routes.
   */
  scopes: string[];
  /**
   * `x-cli-scopes`: on a workspace route that also accepts an account CLI access token, the CLI
   * scope it needs (`service:cli:` + the API key scope); empty elsewhere.
   */
  cliScopes: string[];
  /**
   * `x-setup-scopes`: on a route that also accepts a setup OAuth token of the local setup tool, the
   * setup scope it needs (`service:setup:…`); empty elsewhere.
   */
  setupScopes: string[];
  /** Request headers the route reads for one of its schemes only (`X-Service-Workspace` for a CLI token). */
  optionalHeaders: string[];
  /** Request headers the route's authentication requires (`X-Service-Workspace` on CLI workspace routes). */
  requiredHeaders: string[];
  description: string;
  /** The catalogue codes this route's own declaration can answer (docs/decisions/api-conventions.md). */
  errorCodes: ErrorCode[];
  /** Codes this route answers under another of their catalogue statuses than the first (`otherStatuses`). */
  errorStatuses: Partial<Record<ErrorCode, number>>;
}

function hooksOf(route: RouteOptions): unknown[] {
  return [route.onRequest ?? []].flat();
}

function authOf(route: RouteOptions): AuthRequirement | undefined {
  for (const hook of hooksOf(route)) {
    const requirement = authRequirementOf(hook);
    if (requirement) return requirement;
  }
  return undefined;
}

/**
 * Derived from what the route really runs: its authentication hook, the write pause, its schemas
 * and `config.validationError` (the code a schema failure answers); every route can also answer
 * 503 `service_unavailable`; plus the domain codes the route declares in `config.errors` (its
 * 404s, 409s, `rate_limited`…, from the spec's error tables and what its service throws).
 */
export function routeDocs(route: RouteOptions): RouteDocs {
  const codes = new Set<ErrorCode>();
  const auth = authOf(route);
  const write = [route.method].flat().some((method) => WRITE_METHODS.has(method));
  const lines: string[] = [];
  let security: Record<string, string[]>[] = [];
  let scopes: string[] = [];
  const requiredHeaders: string[] = [];
  const cliScopes: string[] = [];
  const setupScopes: string[] = [];
  const optionalHeaders: string[] = [];
  const errorStatuses: Partial<Record<ErrorCode, number>> = {};
  if (auth?.kind === 'apiKey') {
    security = [{ [API_KEY_SCHEME]: [] }];
    scopes = [auth.scope];
    lines.push(`Authentication: workspace API key (\`Authorization: Bearer svc_api_…\`) with scope \`${auth.scope}\`.`);
    codes.add('unauthenticated').add('insufficient_scope');
    if (auth.cli === 'allow') {
      const scope = cliScope(auth.scope);
      security.push({ [CLI_SCHEME]: [] });
      cliScopes.push(scope);
      optionalHeaders.push(WORKSPACE_HEADER);
      lines.push(
        `Or an account CLI OAuth access token with scope \`${scope}\` and the header \`${WORKSPACE_HEADER}: <workspace slug>\` naming an active workspace where the user is a current member.${write ? ' Viewers read only.' : ''}`,
      );
      codes.add('workspace_required').add('workspace_not_found');
      if (write) codes.add('cli_operation_forbidden');
    } else if (auth.cli === 'deny') {
      lines.push('Account CLI OAuth access tokens are refused (dashboard setup only).');
      codes.add('cli_operation_forbidden');
    }
    if (auth.setup) {
      security.push({ [SETUP_SCHEME]: [] });
      setupScopes.push(auth.setup);
      const bound = route.config?.errors?.includes('integration_scope_mismatch') ?? false;
      lines.push(
        `Or a setup OAuth token of the local setup tool (\`Authorization: Bearer svc_setup_at_…\`) with scope \`${auth.setup}\`, for the Integration and connection it is bound to only${bound ? `: another answers ${SETUP_BINDING_STATUS} \`integration_scope_mismatch\`` : ''}.`,
      );
      // The setup token's answer (01 Authentication 4), not the catalogue's 409 for an `expectedScope` guard.
      errorStatuses.integration_scope_mismatch = SETUP_BINDING_STATUS;
    }
  } else if (auth?.kind === 'session') {
    security = [{ [SESSION_SCHEME]: [] }];
    scopes = ['session'];
    lines.push(
      `Authentication: browser session cookie${auth.allowUnverified ? '' : ' of a user with a verified e-mail'}; writes need a same-origin \`Origin\` or \`X-CSRF-Token\`.`,
    );
    codes.add('unauthenticated');
    if (write) codes.add('forbidden');
    if (!auth.allowUnverified) codes.add('email_verification_required');
    if (write) codes.add('mode_cutover_write_paused');
  } else if (auth?.kind === 'cli') {
    security = [{ [CLI_SCHEME]: [] }];
    scopes = [auth.scope ? cliScope(auth.scope) : 'cli'];
    lines.push(
      `Authentication: account CLI OAuth access token (\`Authorization: Bearer …\`)${auth.scope ? ` with scope \`${cliScope(auth.scope)}\`` : ''}.`,
    );
    codes.add('unauthenticated');
    if (auth.scope) codes.add('insufficient_scope');
    if (auth.workspace) {
      requiredHeaders.push(WORKSPACE_HEADER);
      lines.push(
        `Header \`${WORKSPACE_HEADER}: <workspace slug>\`: an active workspace where the user is a current member, checked on every request.${write ? ' Viewers read only.' : ''}`,
      );
      codes.add('workspace_required').add('workspace_not_found');
      if (write) codes.add('cli_operation_forbidden');
    }
    if (write) codes.add('mode_cutover_write_paused');
  } else {
    lines.push('Authentication: none.');
    if (auth?.kind === 'foreignOriginCheck') codes.add('forbidden');
  }
  if (write && hooksOf(route).includes(rejectPausedWrite)) codes.add('mode_cutover_write_paused');
  const schema = route.schema ?? {};
  if (schema.params || schema.querystring || schema.body) codes.add(route.config?.validationError ?? 'invalid_request');
  if (schema.body) codes.add('invalid_request').add('request_too_large');
  for (const code of route.config?.errors ?? []) codes.add(code);
  codes.add('service_unavailable');
  if (route.config?.validationError) lines.push(`A request that fails the schemas answers \`${route.config.validationError}\`.`);
  return {
    security,
    scopes,
    cliScopes,
    setupScopes,
    optionalHeaders,
    requiredHeaders,
    description: lines.join('\n\n'),
    errorCodes: [...codes],
    errorStatuses,
  };
}

/** The error responses of an operation, by status (the catalogue's, or the route's own of `statuses`), each naming its codes. */
export function errorResponses(
  codes: readonly ErrorCode[],
  statuses: Partial<Record<ErrorCode, number>> = {},
): Record<string, { description: string; content: Record<string, { schema: { $ref: string } }> }> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = statuses[code] ?? ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.map((code) => `\`${code}\``).join(', '),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      ]),
  );
}
