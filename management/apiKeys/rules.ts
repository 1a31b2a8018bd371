import { AppError } from '../../shared/errors/index.js';
import { isWorkspaceScope, type WorkspaceScope } from '../auth/scopes.js';

/** Key lifetimes: from one minute to 366 days; no `expiresInSeconds` means the key never expires. */
export const API_KEY_MIN_LIFETIME_SECONDS = 60;
export const API_KEY_MAX_LIFETIME_SECONDS = 366 * 24 * 3600;
export const API_KEY_NAME_MAX = 120;

/** Key names are optional labels: trimmed, at most 120 characters, no control characters. */
export function validApiKeyName(value: string | undefined): string {
  const name = (value ?? '').trim();
  if ([...name].length > API_KEY_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) throw new AppError('invalid_api_key_request');
  return name;
}

/** A non-empty list of distinct known scopes (01 Authentication 1 and 2; scopes never change later). */
export function validScopes(values: readonly string[]): WorkspaceScope[] {
  if (values.length === 0 || new Set(values).size !== values.length || !values.every(isWorkspaceScope)) {
    throw new AppError('invalid_api_key_request');
  }
  return [...values] as WorkspaceScope[];
}

export function validLifetime(seconds: number | undefined): number | null {
  if (seconds === undefined) return null;
  if (!Number.isInteger(seconds) || seconds < API_KEY_MIN_LIFETIME_SECONDS || seconds > API_KEY_MAX_LIFETIME_SECONDS) {
    throw new AppError('invalid_api_key_request');
  }
  return seconds;
}
