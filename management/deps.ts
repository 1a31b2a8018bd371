import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Config } from '../shared/config.js';
import type { Clock } from '../shared/clock.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import type { ImportPool } from './contracts/importPool.js';

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
  /**
   * The observations store (observation reads, analytics). Optional for callers that never read
   * it (operator CLI); buildApp opens one from the config when none is given and closes it with
   * the app.
   */
  clickhouse?: ClickHouseClient;
  hooks?: TestHooks;
}

/** The deps routes see (`app.deps`): buildApp has filled in the ClickHouse client and the contract import pool. */
export type AppDeps = Deps & { clickhouse: ClickHouseClient; imports: ImportPool };

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
  }
}
