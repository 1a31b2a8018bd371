import { ClickHouseError, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { ClickHouseReadLimits } from '../config.js';

export type { ClickHouseClient } from '@clickhouse/client';

export function createClickHouse(url: string, database: string): ClickHouseClient {
  return createClient({ url, database, request_timeout: 10_000, compression: { request: false, response: false } });
}

/** The client waits this much longer than the server's time limit, so the server's error arrives first. */
const READ_TIMEOUT_MARGIN_MS = 5_000;

/**
 * The settings every read of a reading process carries (its client's defaults), checked on
 * ClickHouse 18.16 and current releases:
 * - `max_execution_time` and `max_memory_usage`: the server stops the query past them (a client
 *   that gives up waiting does not stop it on 18.16);
 * - `timeout_overflow_mode: throw`: an error, never a partial result (a user profile may say `break`);
 * - `wait_end_of_query`: the answer is buffered until the query ends, so a limit hit while rows
 *   stream becomes an HTTP error with its code, not a 200 whose body ends in an exception text.
 */
export function readSettings(limits: ClickHouseReadLimits): ClickHouseSettings {
  return {
    max_execution_time: limits.maxExecutionSeconds,
    timeout_overflow_mode: 'throw',
    max_memory_usage: String(limits.maxMemoryBytes),
    wait_end_of_query: 1,
  };
}

/**
 * The client of a process that only reads ClickHouse (management plane, analyzer): every query
 * it sends carries `readSettings(limits)`. The ingest edge, which inserts, keeps createClickHouse.
 */
export function createClickHouseReader(url: string, database: string, limits: ClickHouseReadLimits): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: limits.maxExecutionSeconds * 1000 + READ_TIMEOUT_MARGIN_MS,
    compression: { request: false, response: false },
    clickhouse_settings: readSettings(limits),
  });
}

/**
 * The server's error code of a failed query, or undefined when the failure is not a server
 * answer (unreachable, timed out). @clickhouse/client makes a ClickHouseError only of messages
 * that end in a `(TYPE_NAME)`, which 18.16 does not print: its errors arrive as plain Errors whose
 * message starts `Code: 159, e.displayText() = ...` (current releases: `Code: 159. DB::Exception`).
 */
export function clickHouseErrorCode(error: unknown): string | undefined {
  if (error instanceof ClickHouseError) return error.code;
  if (!(error instanceof Error)) return undefined;
  return /^Code: (\d+)[.,]/.exec(error.message)?.[1];
}

/**
 * ClickHouse refusals for load rather than for a wrong query: a read past its limits (158
 * TOO_MANY_ROWS, 159 TIMEOUT_EXCEEDED, 160 TOO_SLOW: estimated past the time limit, 241
 * MEMORY_LIMIT_EXCEEDED) or a server at its query capacity (202 TOO_MANY_SIMULTANEOUS_QUERIES).
 */
const OVERLOAD_CODES = new Set(['158', '159', '160', '202', '241']);

export function isClickHouseOverload(error: unknown): boolean {
  const code = clickHouseErrorCode(error);
  return code !== undefined && OVERLOAD_CODES.has(code);
}
