// Outbound HTTP API calls (03 operation table: outbound, http-api, HTTP verb, stable path,
// payloadLocation `response` by default).
//
// instrumentFetch subscribes to undici's diagnostics_channel messages instead of patching
// anything (the model: opentelemetry-js-contrib instrumentation-undici): per-request state lives
// in a WeakMap keyed by undici's request object, and every handler catches everything, because
// an exception thrown by a subscriber surfaces in the host as an uncaught exception.
//
// What the runtime publishes decides what can be inspected. Node 20's global fetch runs the
// undici bundled with Node (6.x: `process.versions.undici`), which publishes
// `undici:request:create`, `undici:request:headers`, `undici:request:trailers` and
// `undici:request:error` but no body chunks: response bodies of those calls are recorded as
// `notInspected: 'stream'` (use observeFetch to inspect them). undici 7 (Node 24's fetch, or the
// `undici` package, whose loading also installs its Agent as the global dispatcher that Node's
// fetch then uses) also publishes `undici:request:bodyChunkReceived`: the raw (still
// content-encoded) chunks are copied, up to the byte bound, while the host reads the very same
// bytes, and decoded and parsed only after the response completed, outside undici's callbacks.

import { AsyncLocalStorage } from 'node:async_hooks';
import * as diagnostics from 'node:diagnostics_channel';
import type { Collector, ObservedBody, Observation, PayloadLocation } from '../types.js';
import {
  DEFAULT_MAX_BYTES,
  contentLength,
  decodableEncoding,
  isJsonContentType,
  notInspected,
  parseJsonBytes,
  parseJsonText,
} from './body.js';
import { admitted, elapsed, recordAdmitted, start, tryCall, type Started } from './observe.js';
import { learnedRouteOf, routeResolver, transportMethod, type RouteOptions } from './route.js';

export interface FetchInstrumentationOptions extends RouteOptions {
  /**
   * Only calls to these origins (`https://api.vendor.example`) are observed. A collector stands for
   * one Integration: give the vendor's origins, or every fetch of the process is attributed to it.
   */
  origins?: string[];
  /** Bodies larger than this (declared or read) are not inspected (default 256 KiB). */
  maxBytes?: number;
  /** Inspect bodies at all (default true); false records every call with `notInspected: 'absent'`. */
  inspectBodies?: boolean;
  /**
   * instrumentFetch only: bytes held for all bodies being read at once (default 16 MiB); a body
   * that would go over it is recorded as `too-large`.
   */
  maxPendingBytes?: number;
}

export interface ObserveFetchOptions extends FetchInstrumentationOptions {
  /** Which body is the payload: the response (default) or the request (a string or byte body only). */
  payloadLocation?: Extract<PayloadLocation, 'request' | 'response'>;
}

/**
 * Calls made through observeFetch: instrumentFetch skips them (both may be installed; a call is
 * observed once). The store follows the call's async context into undici's channel publishers.
 */
const wrappedCalls = new AsyncLocalStorage<true>();

/** Whether helpers for outbound HTTP calls apply to this collector (03: http-api is outbound only). */
function observesOutboundHttp(collector: Collector): boolean {
  return collector.protocol === 'http-api' && collector.direction === 'outbound';
}

function originFilter(origins: string[] | undefined): (origin: string) => boolean {
  if (!origins || origins.length === 0) return () => true;
  const allowed = new Set<string>();
  for (const origin of origins) {
    try {
      allowed.add(new URL(origin).origin);
    } catch {
      // Not a URL: matches nothing.
    }
  }
  return (origin) => allowed.has(origin);
}

interface CallPlan {
  method: string;
  routeTemplate: string;
}

/** What a call would be recorded as, or undefined when it is not observed. Never throws. */
function planner(collector: Collector, options: FetchInstrumentationOptions): (url: URL, method: unknown) => CallPlan | undefined {
  const allowed = originFilter(options.origins);
  const resolve = routeResolver(options, learnedRouteOf(collector));
  return (url, rawMethod) => {
    const method = transportMethod(rawMethod);
    if (!method) return undefined;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (!allowed(url.origin)) return undefined;
    const own = tryCall(() => collector.isOwnRequest(url));
    if (own !== false) return undefined;
    // Past the collector's budget the call is not followed at all.
    if (!admitted(collector)) return undefined;
    return { method, routeTemplate: resolve(url.href, url.pathname, method) };
  };
}

function observation(plan: CallPlan, started: Started, statusCode: number, durationMs: number, body: ObservedBody): Observation {
  return {
    method: plan.method,
    routeTemplate: plan.routeTemplate,
    payloadLocation: 'response',
    statusCode,
    durationMs,
    occurredAt: started.at,
    body,
  };
}

// ---------------------------------------------------------------------------------------------
// instrumentFetch: diagnostics_channel

interface UndiciRequestLike {
  origin?: unknown;
  path?: unknown;
  method?: unknown;
  upgrade?: unknown;
}

interface PendingCall {
  plan: CallPlan;
  started: Started;
  statusCode?: number;
  durationMs?: number;
  /** Decided without reading (not-json, too-large, absent); undefined while the body is read. */
  verdict?: ObservedBody;
  encoding?: string;
  declaredLength?: number;
  chunks: Buffer[];
  chunkSeen: boolean;
  /**
   * Shared with the FinalizationRegistry: if the request is dropped unfinished (a body the host
   * never read to its end), ends the inspection and gives its bytes back to the budget.
   */
  inspection: Inspection;
}

interface Inspection {
  end?: () => void;
  /** Bytes held in `chunks`, counted in the instrumentation's pending budget. */
  bytes: number;
}

/** Statuses whose response has no body (RFC 9110), besides responses to HEAD. */
const NO_BODY_STATUS = new Set([204, 205, 304]);

function responseHeader(headers: unknown, wanted: string): string | undefined {
  if (!Array.isArray(headers)) return undefined;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (String(headers[i]).toLowerCase() === wanted) return String(headers[i + 1]);
  }
  return undefined;
}

const instrumented = new WeakMap<Collector, () => void>();

/**
 * Observes the process's undici requests (the global `fetch` of Node 20 and later) through
 * diagnostics_channel: method, route template, status (0 when no response arrived), duration (to
 * the response headers) and, where the runtime publishes body chunks, the shape of JSON response
 * bodies; the host's requests and responses are neither delayed nor altered. Returns
 * `unsubscribe()`. One subscription per collector: a second call returns the first one's
 * unsubscribe. Observes nothing unless the collector is an outbound `http-api` one (the only
 * protocol of outbound HTTP calls, 03 operation table). An observation is recorded once the
 * response completed (or failed): a response body the host never reads to its end, beyond what
 * undici buffers, is not recorded.
 */
export function instrumentFetch(collector: Collector, options: FetchInstrumentationOptions = {}): () => void {
  const existing = instrumented.get(collector);
  if (existing) return existing;
  if (!observesOutboundHttp(collector)) return () => undefined;

  const plan = planner(collector, options);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxPendingBytes = options.maxPendingBytes ?? 16 * 1024 * 1024;
  const inspect = options.inspectBodies !== false;
  const calls = new WeakMap<object, PendingCall>();
  const abandoned = new FinalizationRegistry<Inspection>((inspection) => release(inspection));
  let pendingBytes = 0;

  /** Ends the inspection (once) and returns its bytes to the budget. */
  function release(inspection: Inspection): void {
    pendingBytes -= inspection.bytes;
    inspection.bytes = 0;
    const end = inspection.end;
    inspection.end = undefined;
    if (end) tryCall(end);
  }

  function dropChunks(call: PendingCall): void {
    pendingBytes -= call.inspection.bytes;
    call.inspection.bytes = 0;
    call.chunks = [];
  }

  function onCreate(message: unknown): void {
    try {
      if (wrappedCalls.getStore()) return;
      const request = (message as { request?: UndiciRequestLike }).request;
      if (typeof request !== 'object' || request === null || request.upgrade) return;
      if (typeof request.origin !== 'string' || typeof request.path !== 'string') return;
      const target = plan(new URL(request.path, request.origin), request.method);
      if (!target) return;
      calls.set(request, { plan: target, started: start(), chunks: [], chunkSeen: false, inspection: { bytes: 0 } });
    } catch {
      // Never into the host.
    }
  }

  function onHeaders(message: unknown): void {
    try {
      const { request, response } = message as { request: object; response?: { statusCode?: unknown; headers?: unknown } };
      const call = calls.get(request);
      if (!call || !response || typeof response.statusCode !== 'number') return;
      call.statusCode = response.statusCode;
      call.durationMs = elapsed(call.started);
      const declared = contentLength(responseHeader(response.headers, 'content-length'));
      const encoding = responseHeader(response.headers, 'content-encoding');
      call.declaredLength = declared;
      call.encoding = encoding;
      if (!inspect || call.plan.method === 'HEAD' || NO_BODY_STATUS.has(response.statusCode) || declared === 0) {
        call.verdict = notInspected('absent');
      } else if (!isJsonContentType(responseHeader(response.headers, 'content-type'))) {
        call.verdict = notInspected('not-json');
      } else if (!decodableEncoding(encoding)) {
        call.verdict = notInspected('error');
      } else if (declared !== undefined && declared > maxBytes) {
        call.verdict = notInspected('too-large');
      }
    } catch {
      // Never into the host.
    }
  }

  function onChunk(message: unknown): void {
    try {
      const { request, chunk } = message as { request: object; chunk?: unknown };
      const call = calls.get(request);
      if (!call || call.statusCode === undefined || call.verdict !== undefined || !(chunk instanceof Uint8Array)) return;
      call.chunkSeen = true;
      if (call.inspection.bytes + chunk.byteLength > maxBytes || pendingBytes + chunk.byteLength > maxPendingBytes) {
        dropChunks(call);
        call.verdict = notInspected('too-large');
        release(call.inspection);
        return;
      }
      if (!call.inspection.end) {
        call.inspection.end = tryCall(() => collector.beginInspection()) ?? (() => undefined);
        abandoned.register(request, call.inspection, call.inspection);
      }
      // undici hands out a view of its receive buffer, which it reuses: copy.
      call.chunks.push(Buffer.from(chunk));
      call.inspection.bytes += chunk.byteLength;
      pendingBytes += chunk.byteLength;
    } catch {
      // Never into the host.
    }
  }

  /** The pending call of a finished request, no longer tracked. */
  function take(message: unknown): PendingCall | undefined {
    const { request } = message as { request: object };
    const call = calls.get(request);
    if (!call) return undefined;
    calls.delete(request);
    abandoned.unregister(call.inspection);
    return call;
  }

  function onDone(message: unknown): void {
    try {
      const call = take(message);
      if (!call) return;
      if (call.statusCode === undefined) return;
      // Parsing waits for the next turn: undici publishes this before it hands the end of the
      // body to the host, which must not wait for the library.
      setImmediate(() => void finish(call));
    } catch {
      // Never into the host.
    }
  }

  async function finish(call: PendingCall): Promise<void> {
    try {
      let body = call.verdict;
      if (body === undefined) {
        if (call.chunkSeen) {
          const bytes = Buffer.concat(call.chunks, call.inspection.bytes);
          dropChunks(call);
          body = await parseJsonBytes(bytes, call.encoding, maxBytes);
        } else {
          // No chunk was published: an empty body, or a runtime whose undici does not publish them.
          body = call.declaredLength === undefined || call.declaredLength > 0 ? notInspected('stream') : notInspected('absent');
        }
      }
      recordAdmitted(collector, observation(call.plan, call.started, call.statusCode ?? 0, call.durationMs ?? elapsed(call.started), body));
    } catch {
      // Never into the host.
    } finally {
      dropChunks(call);
      release(call.inspection);
    }
  }

  function onError(message: unknown): void {
    try {
      const call = take(message);
      if (!call) return;
      dropChunks(call);
      release(call.inspection);
      if (call.statusCode === undefined) {
        // 03 transport rule 1: no protocol response arrived.
        recordAdmitted(collector, observation(call.plan, call.started, 0, elapsed(call.started), notInspected('absent')));
      } else {
        // The response arrived but its body did not complete (reset, aborted, cancelled by the host).
        recordAdmitted(
          collector,
          observation(
            call.plan,
            call.started,
            call.statusCode,
            call.durationMs ?? elapsed(call.started),
            call.verdict ?? notInspected('error'),
          ),
        );
      }
    } catch {
      // Never into the host.
    }
  }

  const subscriptions: [string, (message: unknown) => void][] = [
    ['undici:request:create', onCreate],
    ['undici:request:headers', onHeaders],
    ['undici:request:bodyChunkReceived', onChunk],
    ['undici:request:trailers', onDone],
    ['undici:request:error', onError],
  ];
  for (const [name, handler] of subscriptions) diagnostics.subscribe(name, handler);

  let subscribed = true;
  const unsubscribe = (): void => {
    if (!subscribed) return;
    subscribed = false;
    for (const [name, handler] of subscriptions) {
      try {
        diagnostics.unsubscribe(name, handler);
      } catch {
        // Nothing to undo.
      }
    }
    if (instrumented.get(collector) === unsubscribe) instrumented.delete(collector);
  };
  instrumented.set(collector, unsubscribe);
  return unsubscribe;
}

// ---------------------------------------------------------------------------------------------
// observeFetch: an explicit wrapper

type FetchFunction = typeof globalThis.fetch;

function requestUrl(input: unknown): URL | undefined {
  if (typeof input === 'string') return new URL(input);
  if (input instanceof URL) return input;
  if (typeof input === 'object' && input !== null && typeof (input as { url?: unknown }).url === 'string')
    return new URL((input as { url: string }).url);
  return undefined;
}

function requestMethod(input: unknown, init: RequestInit | undefined): unknown {
  if (init?.method !== undefined) return init.method;
  if (
    typeof input === 'object'
    && input !== null
    && !(input instanceof URL)
    && typeof (input as { method?: unknown }).method === 'string'
  ) {
    return (input as { method: string }).method;
  }
  return 'GET';
}

/** The request body as the payload: a string or byte body of `init`, else not inspectable here. */
function requestBody(input: unknown, init: RequestInit | undefined, maxBytes: number, inspect: boolean): ObservedBody {
  if (!inspect) return notInspected('absent');
  const body = init?.body ?? undefined;
  if (body === undefined || body === null) {
    const inputBody = typeof input === 'object' && input !== null ? (input as { body?: unknown }).body : undefined;
    return inputBody ? notInspected('stream') : notInspected('absent');
  }
  const headers = new Headers(
    init?.headers ?? (typeof input === 'object' && input !== null && !(input instanceof URL) ? (input as Request).headers : undefined),
  );
  let contentType = headers.get('content-type') ?? undefined;
  if (contentType === undefined && typeof body === 'string') contentType = 'text/plain';
  if (!isJsonContentType(contentType)) return notInspected('not-json');
  let text: string;
  if (typeof body === 'string') text = body;
  else if (body instanceof ArrayBuffer) text = Buffer.from(body).toString('utf8');
  else if (ArrayBuffer.isView(body)) text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  else return notInspected('stream');
  if (Buffer.byteLength(text) > maxBytes) return notInspected('too-large');
  return parseJsonText(text);
}

/** Reads a clone of the response body up to maxBytes (the host's own body is untouched). */
async function readClone(copy: Response, maxBytes: number): Promise<ObservedBody> {
  const stream = copy.body;
  if (!stream) return notInspected('absent');
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        void reader.cancel().catch(() => undefined);
        return notInspected('too-large');
      }
      chunks.push(value);
    }
  } catch {
    return notInspected('error');
  }
  return parseJsonText(Buffer.concat(chunks, size).toString('utf8'));
}

/**
 * A fetch-compatible function that observes each call of `fetchImpl`: status (0 when it rejects,
 * the host's error rethrown unchanged), duration to the response headers, and the shape of a JSON
 * body: the response's, read from `response.clone()` in the background, so the host gets the very
 * same Response at the same time and its body is untouched; or, with `payloadLocation: 'request'`,
 * the request's (string or byte bodies). Calls through it are not observed a second time by
 * instrumentFetch. Passes calls through unobserved unless the collector is an outbound `http-api`
 * one.
 */
export function observeFetch(
  collector: Collector,
  fetchImpl: FetchFunction = globalThis.fetch,
  options: ObserveFetchOptions = {},
): FetchFunction {
  if (!observesOutboundHttp(collector)) return fetchImpl;
  const plan = planner(collector, options);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const inspect = options.inspectBodies !== false;
  const payloadLocation = options.payloadLocation ?? 'response';

  const observed = async (input: Parameters<FetchFunction>[0], init?: Parameters<FetchFunction>[1]): Promise<Response> => {
    let target: CallPlan | undefined;
    let started: Started | undefined;
    let sentBody: ObservedBody | undefined;
    try {
      const url = requestUrl(input);
      target = url ? plan(url, requestMethod(input, init)) : undefined;
      if (target && payloadLocation === 'request') sentBody = requestBody(input, init, maxBytes, inspect);
      started = start();
    } catch {
      target = undefined;
    }
    if (!target || !started) return fetchImpl(input, init);

    let response: Response;
    try {
      response = await wrappedCalls.run(true, () => fetchImpl(input, init));
    } catch (error) {
      recordAdmitted(collector, {
        ...observation(target, started, 0, elapsed(started), sentBody ?? notInspected('absent')),
        payloadLocation,
      });
      throw error;
    }

    try {
      const durationMs = elapsed(started);
      const done = (body: ObservedBody) =>
        recordAdmitted(collector, { ...observation(target, started, response.status, durationMs, body), payloadLocation });
      if (sentBody !== undefined) {
        done(sentBody);
      } else {
        const declared = contentLength(response.headers.get('content-length') ?? undefined);
        if (!inspect || target.method === 'HEAD' || NO_BODY_STATUS.has(response.status) || declared === 0 || !response.body)
          done(notInspected('absent'));
        else if (!isJsonContentType(response.headers.get('content-type') ?? undefined)) done(notInspected('not-json'));
        else if (declared !== undefined && declared > maxBytes) done(notInspected('too-large'));
        else if (response.bodyUsed) done(notInspected('error'));
        else {
          // Cloned before the host gets the response, read in the background.
          const copy = response.clone();
          const end = tryCall(() => collector.beginInspection());
          void readClone(copy, maxBytes)
            .then(done, () => done(notInspected('error')))
            .finally(() => tryCall(end))
            .catch(() => undefined);
        }
      }
    } catch {
      // Never into the host.
    }
    return response;
  };
  return observed as FetchFunction;
}
