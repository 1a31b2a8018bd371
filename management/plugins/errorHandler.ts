import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type ErrorCode } from '../../shared/errors/index.js';
import { isInfrastructureError } from '../../shared/db/sqlstate.js';
import { clickHouseErrorCode, isClickHouseOverload } from '../../shared/clickhouse/client.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route-specific catalogue code that a schema validation failure maps to. */
    validationError?: ErrorCode;
    /**
     * The domain codes the route can answer beyond those its hooks and schemas prove (its 404s,
     * 409s, `rate_limited`…), from the spec's error table and what its service throws; `[]` when
     * none. Read by the OpenAPI document (management/apiDocs/routeDocs.ts).
     */
    errors?: readonly ErrorCode[];
  }
}

/**
 * Writes a catalogue answer (also used for the framework's own errors: plugins/clientErrors.ts).
 * Every error is `no-store` (plugins/noStore.ts).
 */
export function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.body());
}

/**
 * A ClickHouse read past its server-side limits (or a server at capacity) is the store refusing
 * load, not a bug: 503 `service_unavailable`, with a Retry-After long enough for other tenants'
 * reads to finish (docs/decisions/operations.md "Limits on shared ClickHouse reads").
 */
export const CLICKHOUSE_BUSY_RETRY_AFTER_SECONDS = 30;

/** Fastify's own client-error codes, all answered as the spec's generic bad-request forms. */
const TOO_LARGE = new Set(['FST_ERR_CTP_BODY_TOO_LARGE']);

/**
 * The one global error handler, in a fixed order (STYLE: Errors): domain error → validation
 * error → malformed request → infrastructure → 500 `service_unavailable` without detail.
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isAppError(error)) return sendAppError(reply, error);
    if (error.validation) {
      const code = request.routeOptions.config?.validationError ?? 'invalid_request';
      return sendAppError(reply, new AppError(code));
    }
    if (error.code && TOO_LARGE.has(error.code)) return sendAppError(reply, new AppError('request_too_large'));
    // Unparsable JSON, empty JSON body, bad media type, bad content-length: all client errors.
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return sendAppError(reply, new AppError(error.statusCode === 413 ? 'request_too_large' : 'invalid_request'));
    }
    if (isClickHouseOverload(error)) {
      request.log.warn({ clickhouseCode: clickHouseErrorCode(error) }, 'ClickHouse read refused for load');
      return sendAppError(reply, new AppError('service_unavailable', { retryAfterSeconds: CLICKHOUSE_BUSY_RETRY_AFTER_SECONDS }));
    }
    if (isInfrastructureError(error)) {
      request.log.warn({ code: error.code }, 'store unavailable');
      return sendAppError(reply, new AppError('service_unavailable'));
    }
    request.log.error({ err: error }, 'unexpected failure');
    return sendAppError(reply, new AppError('service_unavailable', { status: 500 }));
  });
  app.setNotFoundHandler((_request, reply) => sendAppError(reply, new AppError('not_found')));
}
