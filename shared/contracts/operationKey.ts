/** 00-decisions §4: `POST /v1/orders:response:201`. */
export function operationKey(method: string, routeTemplate: string, payloadLocation: string, statusSelector: string): string {
  return `${method} ${routeTemplate}:${payloadLocation}:${statusSelector}`;
}

/**
 * Request and message payloads apply whatever status the exchange ended with; `default` is the
 * selector that 00-decisions §5 matching (exact code, then range, then `default`) gives every status.
 */
export const ANY_STATUS_SELECTOR = 'default';

/**
 * A status selector as written in OpenAPI `responses` or a JSON Schema selector: an exact code
 * 100–599, a range `1XX`–`5XX` (any letter case, stored uppercase), or `default` (any case,
 * stored lowercase). `null` when the value is none of these.
 */
export function normalizeStatusSelector(value: string): string | null {
  if (/^[1-5][0-9][0-9]$/.test(value)) return value;
  if (/^[1-5][xX][xX]$/.test(value)) return value.toUpperCase();
  if (value.toLowerCase() === 'default') return 'default';
  return null;
}

/** Shortens document-supplied text quoted in a reason, so a reason stays readable. */
export function quote(value: string, max = 120): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
