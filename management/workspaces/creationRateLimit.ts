import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '../../shared/errors/index.js';
import { RedisKeys } from '../../shared/redis.js';

const WINDOW_MS = 3600 * 1000;

/**
 * A sliding window in one sorted set per user: drop entries older than the window, then either
 * add this creation or report when the oldest counted one leaves the window. Atomic in Redis, so
 * concurrent creations cannot both take the last slot.
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

export interface CreationSlot {
  release(): Promise<void>;
}

/**
 * Takes one slot of the user's workspace-creation budget (`limit` per rolling hour) or throws
 * 429 `workspace_creation_rate_limited` with `Retry-After` = seconds until a slot frees.
 */
export async function reserveWorkspaceCreation(redis: Redis, input: { userId: string; limit: number; nowMs: number }): Promise<CreationSlot> {
  const key = RedisKeys.workspaceCreations(input.userId);
  const member = `${input.nowMs}:${randomBytes(6).toString('hex')}`;
  const [allowed, blockingScore] = (await redis.eval(RESERVE_SCRIPT, 1, key, input.nowMs, WINDOW_MS, input.limit, member)) as [number, number];
  if (allowed !== 1) {
    const retryAfterSeconds = Math.max(1, Math.ceil((blockingScore + WINDOW_MS - input.nowMs) / 1000));
    throw new AppError('workspace_creation_rate_limited', { retryAfterSeconds });
  }
  return { release: async () => { await redis.zrem(key, member); } };
}
