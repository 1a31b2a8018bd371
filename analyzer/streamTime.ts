import type { Redis } from 'ioredis';
import type { Clock } from '../shared/clock.js';
import { RedisKeys } from '../shared/redis.js';

export interface StreamTimeOptions {
  /**
   * Kept behind the service clock for requests stamped but not yet admitted (at least
   * RECEIPT_TO_ADMISSION_MAX_MS, shared/admissionTiming.ts), and for the clocks of several hosts.
   */
  graceMs: number;
}

/**
 * Stream time: an instant T such that every observation received before T has been analysed.
 * A reconciliation deadline fires only once stream time has passed it, so a backlog (a paused or
 * slow analyzer, ClickHouse down behind an edge's log) delays the verdict instead of producing a
 * false "missing" (Sentry's cron monitors keep their clock the same way, from the consumed
 * stream instead of the wall clock).
 *
 * An observation not yet analysed is in one of three places, each bounded here:
 * - received, not yet admitted: the edge admits it within RECEIPT_TO_ADMISSION_MAX_MS of its
 *   receipt or refuses it, so its receipt time is within graceMs of now;
 * - admitted, not yet durable in an edge's log: its batch is in `RedisKeys.pendingAdmissions`;
 * - durable, not yet analysed (in the log, in ClickHouse, or its job in the stream): its batch is
 *   in `RedisKeys.unanalysedBatches` until the analyzer acknowledges its job.
 * Both sets are scored by receipt time, so their lowest scores bound the rest exactly.
 */
export class StreamTime {
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly options: StreamTimeOptions,
  ) {}

  async nowMs(): Promise<number> {
    let time = this.clock.nowMs() - this.options.graceMs;
    const [pending, unanalysed] = await Promise.all([
      this.redis.zrange(RedisKeys.pendingAdmissions, 0, 0, 'WITHSCORES'),
      this.redis.zrange(RedisKeys.unanalysedBatches, 0, 0, 'WITHSCORES'),
    ]);
    if (pending.length === 2) time = Math.min(time, Number(pending[1]));
    if (unanalysed.length === 2) time = Math.min(time, Number(unanalysed[1]));
    return time;
  }
}
