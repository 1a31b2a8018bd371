import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

export { ERROR_CATALOGUE, INGEST_BATCH_SHAPE_ERROR, type ErrorCode } from './catalogue.js';

export interface AppErrorOptions {
  /** Overrides the catalogue status for codes the spec lists under two statuses. */
  status?: number;
  /** Extra body members; only those the catalogue names for the code are sent. */
  extra?: Record<string, unknown>;
  retryAfterSeconds?: number;
}

/** The one error class of the service: a catalogued code, its status and its body. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(code);
    const spec = ERROR_CATALOGUE[code];
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? spec.status;
    this.extra = options.extra ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds ?? ('retryAfter' in spec ? spec.retryAfter : undefined);
  }

  body(): Record<string, unknown> {
    const allowed: readonly string[] =
      'extra' in ERROR_CATALOGUE[this.code] ? (ERROR_CATALOGUE[this.code] as { extra: readonly string[] }).extra : [];
    const body: Record<string, unknown> = { error: this.code };
    for (const key of allowed) if (this.extra[key] !== undefined) body[key] = this.extra[key];
    return body;
  }
}

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;
