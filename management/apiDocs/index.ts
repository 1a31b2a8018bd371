import type { FastifyInstance, FastifyReply, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ERROR_CATALOGUE, type ErrorCode } from '../../shared/errors/index.js';
import { API_KEY_SCHEME, CLI_SCHEME, SESSION_SCHEME, SETUP_SCHEME, errorResponses, routeDocs } from './routeDocs.js';

export const OPENAPI_URL = '/openapi.json';
export const API_REFERENCE_PREFIX = '/docs';

/** An operation's `routeDocs().errorStatuses`, from `transform` to `transformObject`, which lists the codes by status. */
const ERROR_STATUSES = 'x-error-statuses';

/**
 * Everything the reference page loads comes from this origin (the UI's assets ship in
 * @fastify/swagger-ui): no inline script, no CDN, no framing by other sites.
 */
const REFERENCE_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "object-src 'none'",
  "frame-ancestors 'self'",
  "form-action 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
].join('; ');

/**
 * The document and the page change only with a deploy: cacheable, revalidated on every use (their
 * routes are `noStore: false`, so only their errors are `no-store`: plugins/noStore.ts).
 */
const setDocCaching = (reply: FastifyReply) => {
  if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-cache');
};

function errorComponent() {
  return {
    type: 'object',
    required: ['error'],
    description: 'Every error answer: the catalogue code, plus the members its code names (`reason`, `pointers`, …).',
    properties: { error: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) } },
    additionalProperties: true,
  };
}

/**
 * The route's header schema plus the headers its authentication requires, so the document shows
 * them as required header parameters (the hook checks them; the route schema does not repeat them).
 */
function headersOf(headers: unknown, required: readonly string[], optional: readonly string[] = []): { headers?: unknown } {
  if (required.length === 0 && optional.length === 0) return headers === undefined ? {} : { headers };
  const own = (headers ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  const ownRequired = [...(own.required ?? []), ...required];
  return {
    headers: {
      ...own,
      type: 'object',
      ...(ownRequired.length ? { required: ownRequired } : {}),
      properties: { ...own.properties, ...Object.fromEntries([...required, ...optional].map((name) => [name, { type: 'string' }])) },
    },
  };
}

/**
 * The management plane's OpenAPI document, generated from the route schemas as routes register
 * (so it must be called before the feature plugins), served at `/openapi.json`, with the API
 * reference page at `/docs`. Both are public.
 */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'integration-watch management API',
        version: '1',
        description:
          'Generated from the routes the service registers. Error bodies are `{error: <code>}` (the catalogue); each operation lists the codes it can answer in `x-error-codes` (authentication, validation, write pause, its domain codes, `service_unavailable`) and as responses by status.',
      },
      components: {
        securitySchemes: {
          [API_KEY_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description: 'Workspace API key `svc_api_…`; each operation names its scope in `x-scopes`.',
          },
          [SESSION_SCHEME]: {
            type: 'apiKey',
            in: 'cookie',
            name: 'session',
            description: 'Browser session of the console (`svc_sess_…`).',
          },
          [CLI_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description:
              'Account CLI OAuth access token from the device grant (`/oauth/token`); each operation names its `service:cli:` scope in `x-scopes` (`cli`: any CLI access token), or in `x-cli-scopes` when it also takes a workspace API key.',
          },
          [SETUP_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description:
              'Setup OAuth access token of the local setup tool (`svc_setup_at_…`), from the device grant of the client `service-setup-tool` (`/oauth/token`), bound to the one connection its request named and an owner or admin approved; no `X-Service-Workspace`. Each operation that accepts it names its `service:setup:` scope in `x-setup-scopes`; another Integration or connection answers 403 `integration_scope_mismatch`, and every other route 403 `insufficient_scope`.',
          },
        },
      },
    },
    transform({ schema, url, route }) {
      const docs = routeDocs(route as RouteOptions);
      // A copy: the route's own schema object is the one Fastify validates with.
      const documented = {
        ...schema,
        ...headersOf(schema?.headers, docs.requiredHeaders, docs.optionalHeaders),
        description: docs.description,
        'x-scopes': docs.scopes,
        ...(docs.cliScopes.length ? { 'x-cli-scopes': docs.cliScopes } : {}),
        ...(docs.setupScopes.length ? { 'x-setup-scopes': docs.setupScopes } : {}),
        'x-error-codes': docs.errorCodes,
        ...(Object.keys(docs.errorStatuses).length ? { [ERROR_STATUSES]: docs.errorStatuses } : {}),
        ...(docs.security.length ? { security: docs.security } : {}),
      };
      return { schema: documented, url };
    },
    transformObject(documentObject) {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const { openapiObject } = documentObject;
      const document = openapiObject as unknown as {
        components: { schemas: Record<string, unknown> };
        paths: Record<
          string,
          Record<
            string,
            {
              responses?: Record<string, unknown>;
              'x-error-codes'?: ErrorCode[];
              [ERROR_STATUSES]?: Partial<Record<ErrorCode, number>>;
            }
          >
        >;
      };
      document.components.schemas.Error = errorComponent();
      for (const operations of Object.values(document.paths)) {
        for (const operation of Object.values(operations)) {
          const codes = operation['x-error-codes'];
          if (codes) operation.responses = { ...errorResponses(codes, operation[ERROR_STATUSES]), ...operation.responses };
          // Carried here from `transform` only: the responses say it.
          delete operation[ERROR_STATUSES];
        }
      }
      return openapiObject;
    },
  });
  app.get(OPENAPI_URL, { schema: { hide: true }, config: { noStore: false } }, async (_request, reply) => {
    setDocCaching(reply);
    return reply.send(app.swagger());
  });
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, noStore: false };
    });
    docs.addHook('onSend', async (_request, reply) => {
      setDocCaching(reply);
    });
    await docs.register(swaggerUi, { routePrefix: API_REFERENCE_PREFIX, staticCSP: REFERENCE_CSP, uiConfig: { deepLinking: true } });
  });
}
