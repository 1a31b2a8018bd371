/**
 * Capped exponential backoff with full jitter: a uniformly random delay in
 * [0, min(maxMs, initialMs · 2^(failures − 1))] after the `failures`-th consecutive failure.
 */
export function backoffDelayMs(failures: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 52);
  const ceiling = Math.min(maxMs, initialMs * 2 ** exponent);
  return Math.floor(random() * (ceiling + 1));
}
