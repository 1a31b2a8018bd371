import pg from 'pg';

// Revisions and bigint counters arrive as strings; keep them so (revisions are opaque strings).
export type Pool = pg.Pool;
export type DbClient = pg.PoolClient;
/** Anything that runs a query: the pool or a transaction-bound client. */
export type Queryable = Pick<pg.Pool, 'query'>;

export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}
