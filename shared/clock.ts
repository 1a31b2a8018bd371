import type { Redis } from 'ioredis';
import { RedisKeys } from './redis.js';

/**
 * The service clock (00-decisions §2). Real time by default; with ENABLE_TEST_CLOCK=1 every
 * process reads "now" as real time plus an offset kept in Redis, refreshed by `sync()` at the
 * start of each request so `now()` itself stays synchronous and cheap.
 */
export interface Clock {
  now(): Date;
  nowMs(): number;
  /** Refreshes the test offset from Redis; a no-op for the real clock. */
  sync(): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
  sync: async () => undefined,
};

export class TestClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly redis: Redis) {}

  now(): Date {
    return new Date(this.nowMs());
  }

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  async sync(): Promise<void> {
    const raw = await this.redis.get(RedisKeys.testClockOffset);
    this.offsetMs = raw === null ? 0 : Number(raw);
  }
}

export function createClock(enableTestClock: boolean, redis: Redis): Clock {
  return enableTestClock ? new TestClock(redis) : systemClock;
}

/** Operator commands `clock advance --ms N` and `clock reset`; returns the new offset. */
export async function advanceTestClock(redis: Redis, ms: number): Promise<number> {
  return redis.incrby(RedisKeys.testClockOffset, ms);
}

export async function resetTestClock(redis: Redis): Promise<number> {
  await redis.del(RedisKeys.testClockOffset);
  return 0;
}
