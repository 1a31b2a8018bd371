import pg from 'pg';

// Revisions and bigint counters arrive as strings; keep them so (revisions are opaque strings).
export type Pool = pg.Pool;
export type DbClient = pg.PoolClient;
/** Anything that runs a query: the pool or a transaction-bound client. */
export type Queryable = Pick<pg.Pool, 'query'>;

/**
 * `min` connections, once opened, are kept when idle (pg closes the others after 10 s idle): a new
 * connection costs a SCRAM handshake and a backend start (20–50 ms measured on the local stack),
 * which a request after a quiet spell would otherwise pay.
 */
export function createPool(databaseUrl: string, max = 10, options: { min?: number } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, min: options.min ?? 0 });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}
