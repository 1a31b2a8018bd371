/** PostgreSQL SQLSTATE translation in one place (STYLE: Errors). */
export const UNIQUE_VIOLATION = '23505';

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function isRetryableSqlState(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40001' || code === '40P01';
}

/** True for a unique violation on the named constraint (or any, when no name is given). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== UNIQUE_VIOLATION) return false;
  return constraint === undefined || (error as { constraint?: string }).constraint === constraint;
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08006',
  '08001',
  '08003',
]);

// ioredis gives its connection failures no `code`: with no offline queue (shared/redis.ts) a
// command on a lost connection fails with one of these, which are outages, not bugs.
const REDIS_UNREACHABLE = /^(Connection is closed\.|Stream isn't writeable|Reached the max retries per request limit)/;

/** Errors that mean a store is unreachable rather than a bug: answered 503. */
export function isInfrastructureError(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  if (name === 'MaxRetriesPerRequestError') return true;
  return typeof message === 'string' && REDIS_UNREACHABLE.test(message);
}
