import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../shared/errors/index.js';
import { RedisKeys } from '../shared/redis.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function isWritePaused(redis: Redis): Promise<boolean> {
  return (await redis.get(RedisKeys.maintenancePaused)) === '1';
}

export async function setWritePause(redis: Redis, paused: boolean): Promise<boolean> {
  if (paused) await redis.set(RedisKeys.maintenancePaused, '1');
  else await redis.del(RedisKeys.maintenancePaused);
  return paused;
}

/**
 * Document 01 Conventions: while authenticated writes are paused, any write returns 503
 * `mode_cutover_write_paused` with `Retry-After: 1`. Runs after authentication.
 */
export async function rejectPausedWrite(request: FastifyRequest): Promise<void> {
  if (!WRITE_METHODS.has(request.method)) return;
  if (await isWritePaused(request.server.deps.redis)) throw new AppError('mode_cutover_write_paused');
}
