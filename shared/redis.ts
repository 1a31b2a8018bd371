import { Redis } from 'ioredis';

export type { Redis } from 'ioredis';

/**
 * One Redis client per process. Commands fail fast while Redis is down (no offline queue),
 * so callers answer 503 instead of hanging.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    lazyConnect: true,
  });
  redis.on('error', () => undefined);
  await redis.connect();
  return redis;
}

/** Redis keys shared by several processes, named in one place. */
export const RedisKeys = {
  maintenancePaused: 'maintenance:paused',
  testClockOffset: 'clock:offset_ms',
  credentialEpoch: (connectionId: string) => `cred_epoch:${connectionId}`,
  workspaceCreations: (userId: string) => `ws_create:${userId}`,
} as const;

/**
 * Publishes a connection's credential epoch for the ingest edge (01: rotation and revocation take
 * effect at once). Written before the database commit and never lowered, so a committed change
 * always has its epoch in Redis; a rolled-back one leaves a harmless higher value.
 */
export async function publishCredentialEpoch(redis: Redis, connectionId: string, epoch: number): Promise<void> {
  const script = "local c = tonumber(redis.call('GET', KEYS[1]) or '-1') if tonumber(ARGV[1]) > c then redis.call('SET', KEYS[1], ARGV[1]) end return 1";
  await redis.eval(script, 1, RedisKeys.credentialEpoch(connectionId), String(epoch));
}
