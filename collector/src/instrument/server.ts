// Inbound webhooks (03 operation table: inbound, http-webhook, HTTP verb, stable path,
// payloadLocation `message`): a Fastify plugin and an Express middleware. Neither framework is
// imported: their objects are typed by the few members read here.
//
// The payload is the inbound message: the request body the framework parsed (or the raw bytes a
// raw-body parser kept for signature checks, parsed here when the content type is JSON), never
// the reply. The observation is recorded once the reply was sent, with its status code.

import type { Collector, Observation } from '../types.js';
import { DEFAULT_MAX_BYTES, contentLength, headerValue, notInspected, serverBody } from './body.js';
import { admitted, elapsed, recordAdmitted, start, tryCall, type Started } from './observe.js';
import { acceptableRoute, learnedRouteOf, strippedPath, transportMethod } from './route.js';

export interface InboundOptions {
  /**
   * Route template of a request: returns a template, or undefined for the active contract's
   * learned template, then the framework's route, then the id-stripped path. Overrides all of them.
   */
  routeTemplate?: (url: string, method: string) => string | undefined;
  /** Only requests for which this returns true are observed (default: all). */
  include?: (method: string, routeTemplate: string) => boolean;
  /** Raw ids of the delivery (e.g. the provider's event id header); only their keyed hashes are sent. */
  correlation?: (request: { method: string; url: string; headers: Record<string, unknown>; body?: unknown }) => Observation['correlation'];
  /** Bodies larger than this are not inspected (default 256 KiB). */
  maxBytes?: number;
  /** Inspect bodies at all (default true). */
  inspectBodies?: boolean;
}

/** The path of a request target (`/webhooks/x?y=1` → `/webhooks/x`). */
function pathOf(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/** Whether inbound webhook helpers apply to this collector (03: http-webhook is inbound only). */
function observesInboundWebhooks(collector: Collector): boolean {
  return collector.protocol === 'http-webhook' && collector.direction === 'inbound';
}

interface InboundRequest {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  body?: unknown;
}

/** An inbound request the collector observes: its verb and route template. */
interface Admitted {
  method: string;
  route: string;
}

/**
 * Whether to observe an inbound request, and as what; never throws. The collector's budget is
 * asked last when `include` is given (a request it excludes must not spend it), else first, so
 * that past the budget nothing of the request is read.
 */
function admitInbound(
  collector: Collector,
  options: InboundOptions,
  rawMethod: unknown,
  url: string,
  frameworkRoute: unknown,
): Admitted | undefined {
  try {
    if (!options.include && !admitted(collector)) return undefined;
    const method = transportMethod(rawMethod);
    if (!method) return undefined;
    // The host's callback, the active contract's template, the framework's route, the stripped path.
    const given = tryCall(() => options.routeTemplate?.(url, method));
    let route: string | undefined = acceptableRoute(given) ? given : undefined;
    route ??= learnedRouteOf(collector)(method, pathOf(url));
    route ??= acceptableRoute(frameworkRoute) ? frameworkRoute : strippedPath(url);
    const template = route;
    if (options.include && (tryCall(() => options.include?.(method, template)) !== true || !admitted(collector))) return undefined;
    return { method, route };
  } catch {
    return undefined;
  }
}

/** Builds and records the observation of an admitted inbound request once it was answered; never throws. */
function recordInbound(
  collector: Collector,
  options: InboundOptions,
  request: InboundRequest,
  admitted: Admitted,
  statusCode: number,
  started: Started,
): void {
  try {
    if (!Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) return;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const body =
      options.inspectBodies === false
        ? notInspected('absent')
        : serverBody(
            request.body,
            headerValue(request.headers, 'content-type'),
            contentLength(headerValue(request.headers, 'content-length')),
            maxBytes,
          );
    const correlation = tryCall(() => options.correlation?.(request));
    recordAdmitted(collector, {
      method: admitted.method,
      routeTemplate: admitted.route,
      payloadLocation: 'message',
      statusCode,
      durationMs: elapsed(started),
      occurredAt: started.at,
      body,
      ...(correlation ? { correlation } : {}),
    });
  } catch {
    // Never into the host.
  }
}

// ---------------------------------------------------------------------------------------------
// Fastify

/** The members of a Fastify request read here. */
export interface FastifyRequestLike {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  body?: unknown;
  /** Fastify ≥ 4.10: the matched route's options; `url` is its template (`/webhooks/:provider`). */
  routeOptions?: { url?: string };
}

/** The members of a Fastify reply read here. */
export interface FastifyReplyLike {
  statusCode: number;
  /** The Node response: its 'finish' event ends an observed request. */
  raw: { once(event: 'finish', listener: () => void): unknown };
}

type HookDone = (error?: Error) => void;

/** The member of a Fastify instance used here. */
export interface FastifyInstanceLike {
  addHook(name: 'onRequest', hook: (request: FastifyRequestLike, reply: FastifyReplyLike, done: HookDone) => void): unknown;
}

export interface FastifyCollectorOptions extends InboundOptions {
  collector: Collector;
}

export type FastifyCollectorPlugin = ((instance: FastifyInstanceLike, options: FastifyCollectorOptions, done: HookDone) => void) & {
  [key: symbol]: unknown;
};

function fastifyCollectorPlugin(instance: FastifyInstanceLike, options: FastifyCollectorOptions, done: HookDone): void {
  try {
    const collector = options?.collector;
    if (collector && observesInboundWebhooks(collector)) {
      // One onRequest hook, and a 'finish' listener on admitted requests only: an onResponse hook
      // would make Fastify add response listeners to every request, throttled or not.
      instance.addHook('onRequest', (request, reply, next) => {
        try {
          const admitted = admitInbound(collector, options, request.method, request.url, request.routeOptions?.url);
          if (admitted) {
            const started = start();
            reply.raw.once('finish', () => recordInbound(collector, options, request, admitted, reply.statusCode, started));
          }
        } catch {
          // Never into the host.
        }
        next();
      });
    }
  } catch {
    // Registering never fails the host's application.
  }
  done();
}

/**
 * Fastify plugin for inbound webhooks: `app.register(fastifyCollector, { collector })`. It skips
 * Fastify's encapsulation (`Symbol.for('skip-override')`), so its hooks apply to the context it is
 * registered in (the whole app when registered on the root; register it inside a plugin to cover
 * that plugin's routes only, or use `include`). Records method, Fastify's route template as is
 * (`/webhooks/:provider`) unless the active contract's template or `routeTemplate` gives one, the reply's status code, the duration from onRequest to the response's end and
 * the parsed JSON request body (payloadLocation `message`). Registers nothing unless the collector
 * is an inbound `http-webhook` one.
 */
export const fastifyCollector: FastifyCollectorPlugin = Object.assign(fastifyCollectorPlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'integration-watch-collector',
});

// ---------------------------------------------------------------------------------------------
// Express

/** The members of an Express request read here. */
export interface ExpressRequestLike {
  method: string;
  url: string;
  originalUrl?: string;
  baseUrl?: string;
  headers: Record<string, unknown>;
  body?: unknown;
  route?: { path?: unknown };
}

/** The members of an Express response read here. */
export interface ExpressResponseLike {
  statusCode: number;
  once(event: 'finish', listener: () => void): unknown;
}

export type ExpressMiddleware = (request: ExpressRequestLike, response: ExpressResponseLike, next: (error?: unknown) => void) => void;

/** `req.baseUrl` joined with the matched route's path (`/webhooks` + `/:provider`), or undefined. */
function expressRoute(request: ExpressRequestLike): string | undefined {
  const path = request.route?.path;
  if (typeof path !== 'string') return undefined;
  const joined = `${request.baseUrl ?? ''}${path}`;
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

/**
 * Express (4 or 5) middleware for inbound webhooks: `app.use(expressCollector(collector))`, before
 * the routes. When the response finished it records method, the route template (`options.routeTemplate`;
 * else the active contract's; else `req.baseUrl` joined with `req.route.path`; else the id-stripped path), the status
 * code, the duration, and the request body parsed by express.json() (or the bytes of
 * express.raw() with a JSON content type); without one, `notInspected: 'absent'`. A request whose
 * connection closed before the response finished is not recorded. Passes every request on
 * unobserved unless the collector is an inbound `http-webhook` one.
 */
export function expressCollector(collector: Collector, options: InboundOptions = {}): ExpressMiddleware {
  if (!observesInboundWebhooks(collector)) return (_request, _response, next) => next();
  return (request, response, next) => {
    try {
      const started = start();
      response.once('finish', () => {
        try {
          const url = request.originalUrl ?? request.url;
          const admitted = admitInbound(collector, options, request.method, url, expressRoute(request));
          if (admitted) {
            recordInbound(
              collector,
              options,
              { method: request.method, url, headers: request.headers, body: request.body },
              admitted,
              response.statusCode,
              started,
            );
          }
        } catch {
          // Never into the host.
        }
      });
    } catch {
      // Never into the host.
    }
    next();
  };
}
