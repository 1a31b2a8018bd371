// `Retry-After` (RFC 9110 §10.2.3): delay-seconds (digits only) or an HTTP-date. Parsed strictly:
// anything else (negative, fractional, exponent, hex, signs, junk, an impossible date) is
// ignored, and the caller falls back to its own backoff.

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`);
const RFC_850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`,
);
const ASCTIME = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ( \\d|\\d{2}) (\\d{2}):(\\d{2}):(\\d{2}) (\\d{4})$`);
const DELAY_SECONDS = /^\d{1,12}$/;

/** Epoch milliseconds of an HTTP-date (any of the three RFC 9110 forms), or undefined. */
export function httpDateMs(value: string, nowMs = Date.now()): number | undefined {
  let day: number, month: number, year: number, hour: number, minute: number, second: number;
  const fixdate = IMF_FIXDATE.exec(value);
  const rfc850 = fixdate ? null : RFC_850.exec(value);
  const asctime = fixdate || rfc850 ? null : ASCTIME.exec(value);
  if (fixdate) {
    [day, month, year, hour, minute, second] = [
      +fixdate[1],
      MONTHS.indexOf(fixdate[2]),
      +fixdate[3],
      +fixdate[4],
      +fixdate[5],
      +fixdate[6],
    ];
  } else if (rfc850) {
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    const currentYear = new Date(nowMs).getUTCFullYear();
    year = Math.floor(currentYear / 100) * 100 + +rfc850[3];
    if (year > currentYear + 50) year -= 100;
    [day, month, hour, minute, second] = [+rfc850[1], MONTHS.indexOf(rfc850[2]), +rfc850[4], +rfc850[5], +rfc850[6]];
  } else if (asctime) {
    [month, day, hour, minute, second, year] = [
      MONTHS.indexOf(asctime[1]),
      +asctime[2].trim(),
      +asctime[3],
      +asctime[4],
      +asctime[5],
      +asctime[6],
    ];
  } else {
    return undefined;
  }
  if (hour > 23 || minute > 59 || second > 60 || day < 1) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  // Date.UTC rolls 31 Feb over into March: such a date is not a date.
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return ms;
}

/**
 * Milliseconds to wait from `nowMs`, at most `maxMs`; undefined when the header is absent or not
 * a valid Retry-After (the caller then uses its backoff). A date in the past gives 0.
 */
export function parseRetryAfterMs(
  header: string | readonly string[] | undefined | null,
  maxMs: number,
  nowMs = Date.now(),
): number | undefined {
  if (typeof header !== 'string') return undefined; // absent, or repeated (ambiguous)
  const value = header.trim();
  if (DELAY_SECONDS.test(value)) return Math.min(Number(value) * 1000, maxMs);
  const at = httpDateMs(value, nowMs);
  if (at === undefined) return undefined;
  return Math.min(Math.max(0, at - nowMs), maxMs);
}
