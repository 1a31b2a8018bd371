// Inbound webhooks (03 operation table: inbound, http-webhook, HTTP verb, stable path,
// payloadLocation `message`): a Fastify plugin and an Express middleware. Neither framework is
// imported: their objects are typed by the few members read here.
//
// The payload is the inbound message: the request body the framework parsed (or the raw bytes a
// raw-body parser kept for signature checks, parsed here when the content type is JSON), never
// the reply. The observation is recorded once the reply was sent, with its status code.

import type { Collector, Observation } from '../types.js';
import { DEFAULT_MAX_BYTES, contentLength, headerValue, notInspected, serverBody } from './body.js';
import { elapsed, record, start, tryCall, type Started } from './observe.js';
import { acceptableRoute, strippedPath, transportMethod } from './route.js';

export interface InboundOptions {
  /**
   * Route template of a request the framework's router did not match (a 404, a request answered
   * by a middleware): returns a template, or undefined for the id-stripped path.
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

/** Builds and records one inbound observation; never throws. */
function recordInbound(
  collector: Collector, options: InboundOptions, request: InboundRequest, frameworkRoute: unknown, statusCode: number, started: Started,
): void {
  try {
    const method = transportMethod(request.method);
    if (!method || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599) return;
    let routeTemplate: string | undefined = acceptableRoute(frameworkRoute) ? frameworkRoute : undefined;
    if (routeTemplate === undefined) {
      const given = tryCall(() => options.routeTemplate?.(request.url, method));
      routeTemplate = acceptableRoute(given) ? given : strippedPath(request.url);
    }
    const route = routeTemplate;
    if (options.include && tryCall(() => options.include?.(method, route)) !== true) return;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const body = options.inspectBodies === false
      ? notInspected('absent')
      : serverBody(request.body, headerValue(request.headers, 'content-type'), contentLength(headerValue(request.headers, 'content-length')), maxBytes);
    const correlation = tryCall(() => options.correlation?.(request));
    record(collector, {
      method, routeTemplate: route, payloadLocation: 'message', statusCode, durationMs: elapsed(started), occurredAt: started.at, body,
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
}

type HookDone = (error?: Error) => void;

/** The member of a Fastify instance used here. */
export interface FastifyInstanceLike {
  addHook(name: 'onRequest', hook: (request: FastifyRequestLike, reply: FastifyReplyLike, done: HookDone) => void): unknown;
  addHook(name: 'onResponse', hook: (request: FastifyRequestLike, reply: FastifyReplyLike, done: HookDone) => void): unknown;
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
      const started = new WeakMap<object, Started>();
      instance.addHook('onRequest', (request, _reply, next) => {
        try {
          started.set(request, start());
        } catch {
          // Never into the host.
        }
        next();
      });
      instance.addHook('onResponse', (request, reply, next) => {
        try {
          const began = started.get(request);
          if (began) {
            started.delete(request);
            recordInbound(collector, options, request, request.routeOptions?.url, reply.statusCode, began);
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
 * (`/webhooks/:provider`), the reply's status code, the duration from onRequest to onResponse and
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
 * the routes. When the response finished it records method, the route template (`req.baseUrl`
 * joined with `req.route.path`; else `options.routeTemplate`; else the id-stripped path), the status
 * code, the duration, and the request body parsed by express.json() (or the bytes of
 * express.raw() with a JSON content type); without one, `notInspected: 'absent'`. A request whose
 * connection closed before the response finished is not recorded. Passes every request on
 * unobserved unless the collector is an inbound `http-webhook` one.
 */
export function expressCollector(collector: Collector, options: InboundOptions = {}): ExpressMiddleware {
  if (!observesInboundWebhooks(collector)) return (_request, _response, next) => next();
  return (request, response, next) => {
    try {
      const began = start();
      response.once('finish', () => {
        try {
          recordInbound(collector, options, {
            method: request.method, url: request.originalUrl ?? request.url, headers: request.headers, body: request.body,
          }, expressRoute(request), response.statusCode, began);
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
