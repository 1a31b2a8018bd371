import type { Redis } from 'ioredis';
import type { Clock } from '../shared/clock.js';
import { RedisKeys } from '../shared/redis.js';

/** Stream entries read to find the oldest receipt time among jobs not yet acknowledged. */
const SCAN_ENTRIES = 256;

export interface StreamTimeOptions {
  /** The analysis stream (acknowledged entries are deleted from it, see JobStream.ack). */
  stream: string;
  /** shared/admissionTiming.ts: how long after its receipt a batch may still be admitted and unsettled. */
  admissionInFlightMs: number;
  /** Kept behind the service clock for requests stamped but not yet admitted, and host clocks. */
  graceMs: number;
}

/**
 * Stream time: an instant T such that every observation received before T has been analysed.
 * A reconciliation deadline fires only once stream time has passed it, so a backlog (a paused or
 * slow analyzer, a slow ClickHouse insert at the edge) delays the verdict instead of producing a
 * false "missing" (Sentry's cron monitors keep their clock the same way, from the consumed
 * stream instead of the wall clock).
 *
 * An observation not yet analysed is in one of three places, each bounded here:
 * - received, not yet admitted: its receipt time is within graceMs of now;
 * - admitted, its rows not yet known stored: its batch is in `RedisKeys.pendingAdmissions`, scored
 *   receipt + admissionInFlightMs, so the lowest score gives the oldest such receipt exactly;
 * - durable in an edge's write-ahead log, not yet shipped: its batch is in
 *   `RedisKeys.unshippedBatches`, scored by its receipt;
 * - its analysis job in the stream, not yet acknowledged: the first entries carry their receipt
 *   times; an entry past those read was added later than the last one read, and no batch is
 *   added later than admissionInFlightMs after its receipt.
 */
export class StreamTime {
  constructor(private readonly redis: Redis, private readonly clock: Clock, private readonly options: StreamTimeOptions) {}

  async nowMs(): Promise<number> {
    const now = this.clock.nowMs();
    // The Redis server's clock, moved onto the service clock (the test clock's offset included).
    const offsetMs = now - Date.now();
    let time = now - this.options.graceMs;
    const [pending, unshipped, entries] = await Promise.all([
      this.redis.zrange(RedisKeys.pendingAdmissions, 0, 0, 'WITHSCORES'),
      this.redis.zrange(RedisKeys.unshippedBatches, 0, 0, 'WITHSCORES'),
      this.redis.xrange(this.options.stream, '-', '+', 'COUNT', SCAN_ENTRIES) as Promise<[string, string[]][]>,
    ]);
    if (pending.length === 2) time = Math.min(time, Number(pending[1]) - this.options.admissionInFlightMs);
    if (unshipped.length === 2) time = Math.min(time, Number(unshipped[1]));
    for (const [, fields] of entries) {
      for (let i = 0; i + 1 < fields.length; i += 2) {
        if (fields[i] !== 'receivedAtMs') continue;
        const receivedAtMs = Number(fields[i + 1]);
        if (Number.isFinite(receivedAtMs)) time = Math.min(time, receivedAtMs);
      }
    }
    const last = entries[entries.length - 1];
    if (entries.length === SCAN_ENTRIES && last) {
      time = Math.min(time, Number(last[0].split('-')[0]) + offsetMs - this.options.admissionInFlightMs);
    }
    return time;
  }
}
