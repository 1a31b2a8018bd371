import { AppError, type ErrorCode } from '../../shared/errors/index.js';

/** `limit` of every list route: 1 to 100 written plainly (no sign, no leading zero). */
const LIMIT_SYNTAX = /^(100|[1-9][0-9]?)$/;

/** The page size a `limit` query value asks for, `fallback` when absent; `code` when malformed. */
export function pageLimit(raw: string | undefined, fallback: number, code: ErrorCode): number {
  if (raw === undefined) return fallback;
  if (!LIMIT_SYNTAX.test(raw)) throw new AppError(code);
  return Number(raw);
}
