import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Config } from '../shared/config.js';
import type { Clock } from '../shared/clock.js';

/**
 * Test seams for races the spec names (authority lost between the writes and the commit).
 * Production never sets them.
 */
export interface TestHooks {
  /** Runs after an operation's writes and before its final authority re-check. */
  beforeAuthorityRecheck?: (operationKind: string) => Promise<void>;
}

/** Everything the management plane needs, passed by plain constructor injection. */
export interface Deps {
  config: Config;
  pool: pg.Pool;
  redis: Redis;
  clock: Clock;
  hooks?: TestHooks;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: Deps;
  }
}
