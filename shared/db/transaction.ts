import type pg from 'pg';
import { isRetryableSqlState } from './sqlstate.js';

const MAX_ATTEMPTS = 3;

/**
 * Runs `fn` in one transaction on one client and commits; rolls back on any throw.
 * Serialization failures and deadlocks (40001, 40P01) are retried a bounded number of times.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (attempt < MAX_ATTEMPTS && isRetryableSqlState(error)) continue;
      throw error;
    } finally {
      client.release();
    }
  }
}

/** Runs `fn` in one REPEATABLE READ, READ ONLY transaction: everything it reads is one snapshot. */
export function inReadSnapshot<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return fn(client);
  });
}
