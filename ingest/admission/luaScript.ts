import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { masterNodes } from '../../shared/redis.js';

/**
 * A Lua script run with EVALSHA; on NOSCRIPT (Redis restarted or flushed its script cache) it
 * falls back to EVAL, which also caches the script again. One round trip in the common case.
 */
export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number | Buffer)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }

  /** Loads the script on every master ahead of the first call (start-up); failures are left to the fallback. */
  async load(redis: Redis): Promise<void> {
    await Promise.all(masterNodes(redis).map((node) => node.script('LOAD', this.source).catch(() => undefined)));
  }
}
