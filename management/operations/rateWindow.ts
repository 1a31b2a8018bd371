import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError, type ErrorCode } from '../../shared/errors/index.js';

/**
 * A sliding window in one sorted set: drop entries older than the window, then either add this
 * use or report when the oldest counted one leaves the window. Atomic in Redis, so concurrent
 * requests cannot both take the last slot, and shared by every management process.
 */
const RESERVE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local blocking = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, tonumber(blocking[2])}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {1, 0}`;

/** A taken slot; give it back when the work it was taken for did not happen (a failure, a replay). */
export interface RateSlot {
  release(): Promise<void>;
}

export interface RateWindow {
  key: string;
  windowMs: number;
  limit: number;
  /** The 429 code, answered with `Retry-After` = seconds until a slot frees. */
  code: ErrorCode;
}

/** Takes one slot of `window` at `nowMs`, or throws its 429 with `Retry-After`. */
export async function reserveSlot(redis: Redis, window: RateWindow, nowMs: number): Promise<RateSlot> {
  const member = `${nowMs}:${randomBytes(6).toString('hex')}`;
  const [allowed, blockingScore] = (await redis.eval(RESERVE_SCRIPT, 1, window.key, nowMs, window.windowMs, window.limit, member)) as [
    number,
    number,
  ];
  if (allowed !== 1) {
    const retryAfterSeconds = Math.max(1, Math.ceil((blockingScore + window.windowMs - nowMs) / 1000));
    throw new AppError(window.code, { retryAfterSeconds });
  }
  return {
    release: async () => {
      await redis.zrem(window.key, member);
    },
  };
}
