/**
 * The monthly allowance period (document 03 Limits: "per UTC calendar month"), shared by the
 * ingest edge that counts usage and the management plane that reports it.
 */
export interface UsagePeriod {
  /** `YYYY-MM` of the UTC calendar month. */
  period: string;
  periodStart: Date;
  /** The first instant of the next UTC month. */
  resetAt: Date;
}

export function usagePeriodOf(now: Date): UsagePeriod {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return {
    period: `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`,
    periodStart: new Date(Date.UTC(year, month, 1)),
    resetAt: new Date(Date.UTC(year, month + 1, 1)),
  };
}
