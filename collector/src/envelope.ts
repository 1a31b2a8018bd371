// One observation → one envelope (document 03 "Observation envelope (ingestion)", version 0.3),
// serialised once here. Everything the edge would refuse is refused here instead (a buildError),
// so that nothing invalid is queued or sent. The envelope holds the body's structure and keyed
// hashes of ids: no value of the body, and no raw id, ever goes into it.

import { randomBytes } from 'node:crypto';
import { PLACEHOLDER_DIGEST } from './fingerprint.js';
import { inspectBody } from './inspect.js';
import { isToken, type Settings } from './options.js';
import type { Observation, PayloadLocation } from './types.js';

export const ENVELOPE_VERSION = '0.3';
export const TENANT_PLACEHOLDER = 'ten_authenticated';
export const ENVIRONMENT_PLACEHOLDER = 'env_authenticated';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const MAX_DURATION_MS = 86_400_000;
const str = JSON.stringify;

// The edge's rule for a routeTemplate (shared/envelope/validate.ts concreteSegment): a segment
// that is a UUID, a number of six or more digits, a long hex id or a date is a concrete value.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LONG_NUMBER = /^\d{6,}$/;
const LONG_HEX_ID = /^(?=.*\d)[0-9a-f]{16,}$/i;
const DATE_LIKE = /\d{4}-\d{2}-\d{2}/;

/** A route's verdict and its JSON text (a route is usually one of a handful: remembered, boundedly). */
interface RouteVerdict {
  problem: string | null;
  json: string;
}
const routeVerdicts = { http: new Map<string, RouteVerdict>(), other: new Map<string, RouteVerdict>() };
const MAX_REMEMBERED_ROUTES = 1024;

function routeVerdict(route: unknown, http: boolean): RouteVerdict {
  if (!isToken(route, 256)) return { problem: 'routeTemplate must be 1 to 256 printable ASCII characters without spaces', json: '' };
  const remembered = http ? routeVerdicts.http : routeVerdicts.other;
  let verdict = remembered.get(route);
  if (verdict === undefined) {
    let problem: string | null = null;
    if (route.includes('?') || route.includes('#')) problem = 'routeTemplate must not hold a query string or fragment';
    else if (http && !route.startsWith('/')) problem = 'routeTemplate must be an absolute path for an HTTP protocol';
    else if (route.split(/[/.:]/).some((s) => UUID.test(s) || LONG_NUMBER.test(s) || LONG_HEX_ID.test(s) || DATE_LIKE.test(s))) {
      problem = 'routeTemplate must be a stable template without ids, timestamps or dates';
    }
    verdict = { problem, json: str(route) };
    if (remembered.size >= MAX_REMEMBERED_ROUTES) remembered.clear();
    remembered.set(route, verdict);
  }
  return verdict;
}

/** The members every envelope of a collector shares, serialised once (Settings.envelopeFragments). */
export function envelopeFragmentsOf(
  integrationKey: string,
  direction: string,
  protocol: string,
  redactionPolicyVersion: string,
): { head: string; payloadTail: string } {
  return {
    head:
      `{"envelopeVersion":"${ENVELOPE_VERSION}","tenantId":"${TENANT_PLACEHOLDER}","environmentId":"${ENVIRONMENT_PLACEHOLDER}",`
      + `"integrationId":${str(integrationKey)},"direction":${str(direction)},"protocol":${str(protocol)},"operationIdentityVersion":"1",`,
    payloadTail: `,"redactionPolicyVersion":${str(redactionPolicyVersion)},"schemaInspected":`,
  };
}

// eventIds: `evt_` + 32 hex characters (128 random bits), drawn from a pooled buffer.
let pool = Buffer.alloc(0);
let poolOffset = 0;
export function newEventId(): string {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  const id = pool.toString('hex', poolOffset, poolOffset + 16);
  poolOffset += 16;
  return `evt_${id}`;
}

/**
 * RFC 3339 UTC with milliseconds, years 1970–9999 (what the edge accepts). Most calls fall in the
 * same second as the previous one: its `YYYY-MM-DDTHH:MM:SS.` is kept and only the milliseconds
 * are appended.
 */
let secondStartMs = -1;
let secondPrefix = '';
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);
export function occurredAtOf(value: Date | number | undefined): string | null {
  const ms = value === undefined ? Date.now() : value instanceof Date ? value.getTime() : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms >= 253402300800000) return null;
  const whole = Math.floor(ms);
  const second = whole - (whole % 1000);
  if (second !== secondStartMs) {
    secondPrefix = new Date(second).toISOString().slice(0, 20);
    secondStartMs = second;
  }
  return secondPrefix + MILLIS[whole - second];
}

export type Built =
  | { ok: true; eventId: string; text: string; bytes: number; inspected: boolean }
  | { ok: false; error: string; inspected?: boolean };

const fail = (error: string, inspected?: boolean): Built =>
  inspected === undefined ? { ok: false, error } : { ok: false, error, inspected };

/** The envelope of an observation, serialised, or why there is none. Never throws. */
export function buildEnvelope(observation: Observation, settings: Settings): Built {
  try {
    return build(observation, settings);
  } catch (error) {
    return fail(`observation could not be read: ${error instanceof Error ? error.name : 'error'}`);
  }
}

function build(o: Observation, s: Settings): Built {
  if (typeof o !== 'object' || o === null) return fail('observation must be an object');
  const http = s.protocol === 'http-api' || s.protocol === 'http-webhook';
  const rawMethod = o.method ?? 'POST';
  const method = typeof rawMethod === 'string' ? rawMethod.toUpperCase() : '';
  if (!METHODS.has(method)) return fail('method must be one of GET POST PUT PATCH DELETE HEAD OPTIONS');
  if (!http && method !== 'POST') return fail(`method must be POST for protocol ${s.protocol}`);
  const verdict = routeVerdict(o.routeTemplate, http);
  if (verdict.problem !== null) return fail(verdict.problem);
  const route = o.routeTemplate;
  const payloadLocation: PayloadLocation = o.payloadLocation ?? (s.protocol === 'http-api' ? 'response' : 'message');
  if (s.protocol === 'http-api' ? payloadLocation !== 'response' && payloadLocation !== 'request' : payloadLocation !== 'message') {
    return fail(`payloadLocation ${String(payloadLocation)} does not fit protocol ${s.protocol}`);
  }
  const status = o.statusCode;
  if (!Number.isInteger(status) || !(status === 0 || (status >= 100 && status <= 599)))
    return fail('statusCode must be 0 or an integer from 100 through 599');
  const duration = o.durationMs;
  if (typeof duration !== 'number' || !Number.isFinite(duration) || duration < 0 || duration > MAX_DURATION_MS)
    return fail('durationMs must be a number from 0 through 86400000');
  const attempt = o.attempt ?? 1;
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > 1000) return fail('attempt must be an integer from 1 through 1000');
  const eventType = o.eventType ?? (s.protocol === 'http-api' ? `${method.toLowerCase()}.${payloadLocation}` : route);
  // The route is a token already: as the default eventType only its length is left to check.
  if (eventType === route ? route.length > 128 : !isToken(eventType, 128))
    return fail('eventType must be 1 to 128 printable ASCII characters without spaces');
  const occurredAt = occurredAtOf(o.occurredAt);
  if (occurredAt === null) return fail('occurredAt must be a valid time from 1970 through 9999');
  const observedFingerprint = o.contractFingerprint ?? null;
  if (observedFingerprint !== null && (typeof observedFingerprint !== 'string' || !FINGERPRINT.test(observedFingerprint))) {
    return fail('contractFingerprint must be sha256: followed by 64 lowercase hex characters');
  }

  // Keyed hashes: the raw ids stop here.
  const correlation = o.correlation ?? {};
  const outcome = o.outcome ?? {};
  if (typeof correlation !== 'object' || typeof outcome !== 'object' || correlation === null || outcome === null)
    return fail('correlation and outcome must be objects');
  const { sourceEventId, idempotencyKey } = correlation;
  const { businessObjectId, businessObjectType } = outcome;
  if (sourceEventId !== undefined && typeof sourceEventId !== 'string') return fail('sourceEventId must be a string');
  if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string') return fail('idempotencyKey must be a string');
  if (businessObjectId !== undefined && typeof businessObjectId !== 'string') return fail('businessObjectId must be a string');
  if (businessObjectType !== undefined && !isToken(businessObjectType, 128))
    return fail('businessObjectType must be 1 to 128 printable ASCII characters without spaces');
  const accepted = outcome.accepted ?? (status >= 200 && status <= 299);
  if (typeof accepted !== 'boolean') return fail('outcome.accepted must be a boolean');

  const operation = `${method} ${route} ${payloadLocation} ${status}`;
  const inspection = inspectBody(o.body, s.maxInspectedBodyBytes, (value) => s.shapes.digestOf(operation, value));
  const digest = inspection.inspected ? inspection.digest : PLACEHOLDER_DIGEST;

  let correlationText = '';
  if (sourceEventId !== undefined || idempotencyKey !== undefined || businessObjectId !== undefined) {
    const members: string[] = [];
    if (sourceEventId !== undefined) members.push(`"sourceEventIdHash":${str(s.hash(sourceEventId))}`);
    if (idempotencyKey !== undefined) members.push(`"idempotencyKeyHash":${str(s.hash(idempotencyKey))}`);
    members.push(`"hashNamespace":${str(s.hashNamespace)}`);
    correlationText = `"correlation":{${members.join(',')}},`;
  }
  let outcomeText = `"accepted":${accepted}`;
  if (businessObjectType !== undefined) outcomeText += `,"businessObjectType":${str(businessObjectType)}`;
  if (businessObjectId !== undefined) outcomeText += `,"businessObjectIdHash":${str(s.hash(businessObjectId))}`;

  const eventId = newEventId();
  // Every member around the shape is ASCII (tokens checked above or in the options, hex digests,
  // numbers, fixed words), so the parts' UTF-8 lengths are their string lengths; the shape's text,
  // the bulk of the envelope, comes with its length from the digest and is not flattened here,
  // only when joined into a batch.
  const head =
    `${s.envelopeFragments.head}"eventId":"${eventId}","occurredAt":"${occurredAt}","eventType":${eventType === route ? verdict.json : str(eventType)},`
    + correlationText
    + `"contract":{"observedFingerprint":${observedFingerprint === null ? 'null' : `"${observedFingerprint}"`}},`
    + `"transport":{"method":"${method}","routeTemplate":${verdict.json},"payloadLocation":"${payloadLocation}",`
    + `"statusCode":${status},"durationMs":${str(duration)},"attempt":${attempt}},`
    + `"payload":{"storage":"none","schemaFingerprint":"${digest.fingerprint}","schemaShape":`;
  const tail = `${s.envelopeFragments.payloadTail}${inspection.inspected}},"outcome":{${outcomeText}}}`;
  const text = head + digest.text + tail;
  const bytes = head.length + digest.bytes + tail.length;
  return { ok: true, eventId, text, bytes, inspected: inspection.inspected };
}
