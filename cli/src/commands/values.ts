// Flag values the workspace commands share: ids checked for their form before any request (a
// `wint_` where an `int_` is needed would only earn a 404), counts, durations and times, and how
// tables print them.

import { InvalidArgumentError } from 'commander';
import { CliError } from '../errors.js';

/** Checks an id's prefix (00-decisions §4); `what` says which id the flag wants. */
export function requireId(value: string, prefix: string, what: string): string {
  if (!value.startsWith(prefix) || value.length === prefix.length) {
    throw new CliError(`${what} must be an id beginning ${prefix} (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** A commander parser for a whole number of at least `min` (and at most `max`). */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new InvalidArgumentError('not a whole number.');
    const value = Number(raw);
    if (value < min || value > max) throw new InvalidArgumentError(`must be from ${min} to ${max}.`);
    return value;
  };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `1500`, `1500ms`, `90s`, `15m`, `2h`, `1d` → milliseconds, or null when it is none of those. */
export function durationMs(raw: string): number | null {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2] ?? 'ms'] : null;
}

/** A commander parser for a duration flag (`--max-delay 15m`). */
export function duration(raw: string): number {
  const ms = durationMs(raw);
  if (ms === null) throw new InvalidArgumentError('give milliseconds or a number with ms, s, m, h or d (e.g. 90s, 15m, 2h).');
  return ms;
}

/**
 * A commander parser for `--from`/`--to`: an RFC 3339 timestamp, passed on as written (the
 * service checks it), or a duration meaning that long before now (`2h`, `7d`).
 */
export function timestampOrAgo(raw: string): string {
  const ago = durationMs(raw);
  if (ago !== null && /[a-z]$/.test(raw.trim())) return new Date(Date.now() - ago).toISOString();
  if (!Number.isNaN(Date.parse(raw)) && /^\d{4}-\d\d-\d\dT/i.test(raw)) return raw;
  throw new InvalidArgumentError('give an RFC 3339 time (2025-01-31T12:00:00Z) or a duration before now (30m, 2h, 7d).');
}

/** A commander parser for one of `choices`. */
export function oneOf<T extends string>(...choices: T[]) {
  return (raw: string): T => {
    if (!(choices as string[]).includes(raw)) throw new InvalidArgumentError(`one of ${choices.join(', ')}.`);
    return raw as T;
  };
}

/** `2025-02-01T10:20:30.000Z` → `2025-02-01 10:20:30Z`; null or absent → `-`. */
export function time(value: string | null | undefined): string {
  if (value === null || value === undefined) return '-';
  return value.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** Milliseconds in the largest unit that divides them: 900000 → `15m`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}

/** Key/value lines, keys padded to one column. */
export function fields(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([key]) => key.length));
  return rows.map(([key, value]) => `${`${key}:`.padEnd(width + 2)}${value}`).join('\n');
}
