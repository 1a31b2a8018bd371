import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { pageLimit } from '../pagination/pageLimit.js';

/**
 * Parsing of the observation read queries (00-decisions §5). Query values arrive as strings
 * (nothing is coerced) and every failure is the route's own 400 (03 CLI API errors:
 * `invalid_evidence_query`).
 */

export const DEFAULT_OBSERVATION_LIMIT = 25;
/** `limit`: 1 to 100, default 25 (03 Limits: CLI list pages, the same for API keys). */
export function parseLimit(raw: string | undefined): number {
  return pageLimit(raw, DEFAULT_OBSERVATION_LIMIT, 'invalid_evidence_query');
}

// RFC 3339 `date-time`: `T` (either case), optional fraction, `Z` or a numeric offset. A `+` that a
// client did not percent-encode reaches us as a space (form decoding): read as `+`, since nothing
// else can stand there.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/;

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysInMonth = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : MONTH_DAYS[month - 1]);

/**
 * Epoch milliseconds of an RFC 3339 timestamp, or null when it is not one. A fraction finer than
 * a millisecond rounds up (stored receipt times are whole milliseconds, so `t >= from` and
 * `t < to` keep their meaning). Leap seconds (`:60`) are refused.
 */
export function parseTimestamp(raw: string): number | null {
  const match = RFC3339.exec(raw);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (match[8] === undefined) {
    const offsetHour = Number(match[10]);
    const offsetMinute = Number(match[11]);
    if (offsetHour > 23 || offsetMinute > 59) return null;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  const fraction = (match[7] ?? '').padEnd(9, '0');
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3)));
  const subMillisecond = Number(fraction.slice(3)) > 0 ? 1 : 0;
  return date.getTime() - offsetMinutes * 60_000 + subMillisecond;
}

/** A receipt-time range: `from` inclusive, `to` exclusive, epoch milliseconds (either may be open). */
export interface TimeRange {
  fromMs: number | null;
  toMs: number | null;
}

/** `from` and `to` of a query; from after to is refused (an equal pair is an empty range). */
export function parseTimeRange(
  rawFrom: string | undefined,
  rawTo: string | undefined,
  code: ErrorCode = 'invalid_evidence_query',
): TimeRange {
  const fromMs = rawFrom === undefined ? null : parseTimestamp(rawFrom);
  const toMs = rawTo === undefined ? null : parseTimestamp(rawTo);
  if ((rawFrom !== undefined && fromMs === null) || (rawTo !== undefined && toMs === null)) throw new AppError(code);
  if (fromMs !== null && toMs !== null && fromMs > toMs) throw new AppError(code);
  return { fromMs, toMs };
}

/**
 * The `status` filter: a status class (`1xx` … `5xx`, any case of the x's), `transport_error`
 * (statusCode 0, 03 transport rule 1), or one exact code (`0` or 100–599).
 */
export type StatusFilter = { kind: 'class'; hundreds: 1 | 2 | 3 | 4 | 5 } | { kind: 'transport_error' } | { kind: 'code'; code: number };

export function parseStatusFilter(raw: string): StatusFilter {
  const klass = /^([1-5])[xX][xX]$/.exec(raw);
  if (klass) return { kind: 'class', hundreds: Number(klass[1]) as 1 | 2 | 3 | 4 | 5 };
  if (raw === 'transport_error') return { kind: 'transport_error' };
  if (raw === '0') return { kind: 'transport_error' };
  if (/^[1-5][0-9]{2}$/.test(raw)) return { kind: 'code', code: Number(raw) };
  throw new AppError('invalid_evidence_query');
}

/** The canonical spelling of a status filter (what a cursor binds). */
export function statusFilterKey(filter: StatusFilter): string {
  switch (filter.kind) {
    case 'class':
      return `${filter.hundreds}xx`;
    case 'transport_error':
      return 'transport_error';
    case 'code':
      return String(filter.code);
  }
}

// Envelope bounds (shared/envelope/schemas.ts): eventType is 1-128 printable ASCII characters
// without spaces; an operationKey is `<METHOD> <routeTemplate>:<payloadLocation>:<statusCode>`
// with a route of at most 256 such characters. Anything else can match nothing: refused.
const EVENT_TYPE = /^[\x21-\x7E]{1,128}$/;
const OPERATION_KEY = /^[A-Z]{1,7} [\x21-\x7E]{1,256}:(request|response|message):(0|[1-5][0-9]{2})$/;

export function parseEventType(raw: string): string {
  if (!EVENT_TYPE.test(raw)) throw new AppError('invalid_evidence_query');
  return raw;
}

export function parseOperationKey(raw: string): string {
  if (!OPERATION_KEY.test(raw)) throw new AppError('invalid_evidence_query');
  return raw;
}

/** An eventId as the envelope schema admits it (shared/envelope/schemas.ts). */
export const EVENT_ID = /^evt_[A-Za-z0-9._:-]{1,124}$/;
