import { AppError } from '../errors/index.js';

/** 400 `invalid_contract` with the offending RFC 6901 pointers (01 "Import rules" 6). */
export function invalidContract(reason: string, pointers: readonly string[]): AppError {
  return new AppError('invalid_contract', { extra: { reason, pointers: [...pointers] } });
}
