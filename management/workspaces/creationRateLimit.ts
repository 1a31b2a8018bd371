import type { Redis } from 'ioredis';
import { RedisKeys } from '../../shared/redis.js';
import { reserveSlot, type RateSlot } from '../operations/rateWindow.js';

/**
 * Takes one slot of the user's workspace-creation budget (`limit` per rolling hour) or throws
 * 429 `workspace_creation_rate_limited` with `Retry-After` = seconds until a slot frees.
 */
export function reserveWorkspaceCreation(redis: Redis, input: { userId: string; limit: number; nowMs: number }): Promise<RateSlot> {
  return reserveSlot(
    redis,
    { key: RedisKeys.workspaceCreations(input.userId), windowMs: 3600 * 1000, limit: input.limit, code: 'workspace_creation_rate_limited' },
    input.nowMs,
  );
}
