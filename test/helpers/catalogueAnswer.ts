import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CATALOGUE } from '../../shared/errors/index.js';

/**
 * The statuses an error code may come with where that is not (only) the catalogue's own status:
 * the one code the spec gives two statuses, and `service_unavailable` only as a 503 (a bad input
 * must never reach the 500 answer of the global handler).
 */
export const DUAL_STATUS = new Map<string, number[]>([
  ['integration_scope_mismatch', [403, 409]],
  ['service_unavailable', [503]],
]);

/**
 * Why an injected answer is not a catalogue answer, or null when it is one: a 5xx, or a 4xx whose
 * body is not `{ error }` with a catalogued code at its catalogued status (2xx and 3xx pass).
 */
export function catalogueProblem(res: LightMyRequestResponse): string | null {
  if (res.statusCode >= 500) return `${res.statusCode} ${res.body.slice(0, 300)}`;
  if (res.statusCode < 400) return null;
  if (!/^application\/json/.test(String(res.headers['content-type']))) return `${res.statusCode} as ${res.headers['content-type']}`;
  let code: unknown;
  try {
    code = (JSON.parse(res.body) as { error?: unknown } | null)?.error;
  } catch {
    return `${res.statusCode} without a JSON body: ${res.body.slice(0, 200)}`;
  }
  if (typeof code !== 'string') return `${res.statusCode} without an error code: ${res.body.slice(0, 200)}`;
  const spec = (ERROR_CATALOGUE as Record<string, { status: number }>)[code];
  if (!spec) return `uncatalogued ${code}`;
  const allowed = DUAL_STATUS.get(code) ?? [spec.status];
  return allowed.includes(res.statusCode) ? null : `${code} with ${res.statusCode}`;
}
