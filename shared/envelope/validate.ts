import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SCHEMA_SHAPE_SCHEMA, envelopeSchema } from './schemas.js';
import { shapeText } from './shapeText.js';
import { ENVELOPE_VERSIONS, type EnvelopeVersion, type ObservationEnvelope, type Protocol } from './types.js';

/** At most this many issues are reported for one envelope; the first ones name the problem. */
export const MAX_ISSUES_PER_ENVELOPE = 20;

function buildValidators(): {
  byVersion: Map<string, ValidateFunction>;
  unknownVersion: ValidateFunction;
  withoutShape: Map<string, ValidateFunction>;
} {
  // unicodeRegExp: false — every pattern of the envelope schema is ASCII-only (where the 'u' flag
  // changes nothing), and V8 runs them about a quarter faster without it (bench/RESULTS.md).
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictRequired: false,
    verbose: true,
    allowUnionTypes: true,
    coerceTypes: false,
    unicodeRegExp: false,
  });
  ajv.addKeyword({ keyword: 'x-issue', schemaType: 'string' });
  ajv.addSchema(SCHEMA_SHAPE_SCHEMA);
  const byVersion = new Map<string, ValidateFunction>();
  const withoutShape = new Map<string, ValidateFunction>();
  for (const version of ENVELOPE_VERSIONS) {
    byVersion.set(version, ajv.compile(envelopeSchema(version)));
    withoutShape.set(version, ajv.compile(envelopeSchema(version, 'object')));
  }
  return { byVersion, unknownVersion: ajv.compile(envelopeSchema(null)), withoutShape };
}

// Compiled once per process (the hot path only runs the generated functions).
const validators = buildValidators();

const TYPE_WORDS: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  null: 'null',
};

function typeWords(type: unknown): string {
  const list = Array.isArray(type) ? type : [type];
  return list.map((name) => TYPE_WORDS[String(name)] ?? String(name)).join(' or ');
}

/** One issue text per violation: `<JSON pointer> <what is wrong>` (03 "field-level schema messages"). */
function issueOf(error: ErrorObject): string | null {
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'if':
      return null;
    case 'required':
      return `${path}/${String(params.missingProperty)} is required`;
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      if (path === '/payload' && name === 'schemaInspected') return '/payload/schemaInspected is not allowed before envelope version 0.3';
      return `${path}/${name} is not allowed`;
    }
  }
  const where = path === '' ? 'envelope' : path;
  const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-issue'];
  if (typeof custom === 'string') return `${where} ${custom}`;
  switch (error.keyword) {
    case 'type':
      return `${where} must be ${typeWords(params.type)}`;
    case 'const':
      return `${where} must be ${JSON.stringify(params.allowedValue)}`;
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}

const HTTP_PROTOCOLS: ReadonlySet<Protocol> = new Set(['http-api', 'http-webhook']);

/**
 * 03 transport rules and the operation table: which direction, method and payloadLocation each
 * protocol allows, and what a routeTemplate may hold. Runs only on a structurally valid envelope.
 */
function operationIssues(envelope: ObservationEnvelope): string[] {
  const issues: string[] = [];
  const { protocol, direction, transport } = envelope;
  if (protocol === 'http-api') {
    if (direction !== 'outbound') issues.push('/direction must be outbound for protocol http-api');
    if (transport.payloadLocation === 'message')
      issues.push('/transport/payloadLocation must be response or request for protocol http-api');
  } else {
    if (protocol === 'http-webhook' && direction !== 'inbound') issues.push('/direction must be inbound for protocol http-webhook');
    if (transport.payloadLocation !== 'message') issues.push(`/transport/payloadLocation must be message for protocol ${protocol}`);
    if (protocol !== 'http-webhook' && transport.method !== 'POST') issues.push(`/transport/method must be POST for protocol ${protocol}`);
  }
  const route = transport.routeTemplate;
  if (HTTP_PROTOCOLS.has(protocol)) {
    if (!route.startsWith('/') || route.includes('?') || route.includes('#')) {
      issues.push('/transport/routeTemplate must be an absolute path without a query string for an HTTP protocol');
    }
  } else if (route.includes('?') || route.includes('#')) {
    issues.push(`/transport/routeTemplate must be a queue, topic, subscription, feed or job label for protocol ${protocol}`);
  }
  if (concreteSegment(route)) {
    issues.push('/transport/routeTemplate must be a stable template without message ids, run ids, timestamps or customer ids');
  }
  return issues;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LONG_NUMBER = /^\d{6,}$/;
const LONG_HEX_ID = /^(?=.*\d)[0-9a-f]{16,}$/i;
const DATE_LIKE = /\d{4}-\d{2}-\d{2}/;

/**
 * 03 transport rule 2: a routeTemplate "never holds message ids, run ids, timestamps or customer
 * ids". A conservative check for the unmistakable cases: a segment that is a UUID, a number of six
 * or more digits, a long hex id, or a date.
 */
export function concreteSegment(route: string): boolean {
  let verdict = concreteRoutes.get(route);
  if (verdict === undefined) {
    verdict = route
      .split(/[/.:]/)
      .some((segment) => UUID.test(segment) || LONG_NUMBER.test(segment) || LONG_HEX_ID.test(segment) || DATE_LIKE.test(segment));
    // A collector sends the same few routes over and over: remember the verdicts, boundedly.
    if (concreteRoutes.size >= MAX_REMEMBERED_ROUTES) concreteRoutes.clear();
    concreteRoutes.set(route, verdict);
  }
  return verdict;
}

const MAX_REMEMBERED_ROUTES = 1024;
const concreteRoutes = new Map<string, boolean>();

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|([+-])(\d{2}):(\d{2}))$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1];
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/** Epoch milliseconds of an RFC 3339 timestamp whose every field is in range (1970 or later), else null. */
export function timestampMs(value: string): number | null {
  // Runs once per envelope on the ingest path: the usual UTC form is read without the pattern.
  const utc = utcTimestampMs(value);
  return utc !== undefined ? utc : timestampMsByPattern(value);
}

/** The decimal number of `count` digits at `from`, or -1 if one of them is not a digit. */
function digitsAt(value: string, from: number, count: number): number {
  let number = 0;
  for (let i = from; i < from + count; i += 1) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    number = number * 10 + digit;
  }
  return number;
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.1 to 9 digits]Z` read by hand: its epoch milliseconds or null (a field out
 * of range), the same as timestampMsByPattern gives; undefined for any other form.
 */
function utcTimestampMs(value: string): number | null | undefined {
  const length = value.length;
  if (length < 20 || length > 30 || value.charCodeAt(length - 1) !== 90 /* Z */) return undefined;
  if (value[4] !== '-' || value[7] !== '-' || value[10] !== 'T' || value[13] !== ':' || value[16] !== ':') return undefined;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 2);
  const day = digitsAt(value, 8, 2);
  const hour = digitsAt(value, 11, 2);
  const minute = digitsAt(value, 14, 2);
  const second = digitsAt(value, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let fraction = '';
  if (length > 20) {
    if (value[19] !== '.' || length === 21 || digitsAt(value, 20, length - 21) < 0) return undefined;
    fraction = value.slice(19, length - 1);
  }
  return fromFields(year, month, day, hour, minute, second, fraction, 0);
}

/** timestampMs by the RFC 3339 pattern: every offset form. */
export function timestampMsByPattern(value: string): number | null {
  const m = TIMESTAMP.exec(value);
  if (!m) return null;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const hours = +m[10];
    const minutes = +m[11];
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  return fromFields(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6], m[7] ?? '', offsetMinutes);
}

/** Epoch milliseconds of checked-in-range fields, or null; `fraction` is `.` and digits, or empty. Plain arithmetic, no Date objects. */
function fromFields(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  fraction: string,
  offsetMinutes: number,
): number | null {
  // Date.UTC reads years 0–99 as 1900–1999, and nothing before 1970 is accepted anyway.
  if (year < 1970 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;
  const milliseconds = fraction ? Math.floor(+`0${fraction}` * 1000) : 0;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, milliseconds) - offsetMinutes * 60_000;
  return ms >= 0 ? ms : null;
}

export type EnvelopeCheck =
  /** shape: the schemaShape's JSON text (shapeText.ts). */
  { valid: true; envelope: ObservationEnvelope; occurredAtMs: number; shape: string } | { valid: false; issues: string[] };

/**
 * Validates one batch item against its envelope version and the transport and operation rules.
 * Never throws; every violation becomes one issue text.
 *
 * A valid item passes the schema without the shape tree and then shapeText's walk, which also
 * serialises the tree. Anything either refuses is validated again against the full schema,
 * whose errors are the issues (shapeText.ts says why).
 */
export function validateEnvelope(item: unknown): EnvelopeCheck {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return { valid: false, issues: ['envelope must be an object'] };
  const version = (item as { envelopeVersion?: unknown }).envelopeVersion;
  const lean = typeof version === 'string' ? validators.withoutShape.get(version) : undefined;
  const shape = lean?.(item) ? shapeText((item as ObservationEnvelope).payload.schemaShape) : null;
  if (shape === null) {
    const validate = (typeof version === 'string' && validators.byVersion.get(version as EnvelopeVersion)) || validators.unknownVersion;
    if (!validate(item)) return { valid: false, issues: issuesOf(validate.errors) };
  }
  const envelope = item as ObservationEnvelope;
  const issues = operationIssues(envelope);
  const occurredAtMs = timestampMs(envelope.occurredAt);
  if (occurredAtMs === null) issues.push('/occurredAt must be an ISO 8601 timestamp with a time zone, e.g. 2025-01-31T12:00:00.000Z');
  if (issues.length > 0 || occurredAtMs === null) return { valid: false, issues };
  // shape null here: the full schema accepted a tree the walk refused. The two agree
  // (test/shapeText.test.ts) and the schema is the authority if they did not; the text would then
  // keep the collector's member order.
  return { valid: true, envelope, occurredAtMs, shape: shape ?? JSON.stringify(envelope.payload.schemaShape) };
}

/** The schema's errors as issue texts, each once, at most MAX_ISSUES_PER_ENVELOPE. */
function issuesOf(errors: ErrorObject[] | null | undefined): string[] {
  const issues = new Set<string>();
  for (const error of errors ?? []) {
    const issue = issueOf(error);
    if (issue !== null) issues.add(issue);
    if (issues.size >= MAX_ISSUES_PER_ENVELOPE) break;
  }
  return [...issues];
}
