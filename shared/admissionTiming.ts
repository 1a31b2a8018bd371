/**
 * The one timing the ingest edge and the analyzer must agree on. The edge stamps a batch with its
 * receipt time when the request is authenticated, then checks it (worker threads, possibly
 * queued under load), then admits it, which puts it in `RedisKeys.pendingAdmissions`. Between the
 * stamp and the admission the batch is in no set the analyzer can see, so the analyzer's stream
 * time stays at least this far behind the service clock (ANALYZER_RULE_GRACE_MS may not be lower),
 * and the edge refuses with 503 a batch it would admit later than this after its stamp
 * (ingest/pipeline/batchIntake.ts). Both sides import this constant; test/admissionTiming.test.ts pins them.
 * 5 s: with 1,024 requests in flight on two cores a request spends about a second in the edge
 * before its admission (bench/RESULTS.md); a bound of 1 s refused some of them.
 */
export const RECEIPT_TO_ADMISSION_MAX_MS = 5_000;

/**
 * The least INGEST_ADMISSION_DEADLINE_MS: a batch admitted as late as RECEIPT_TO_ADMISSION_MAX_MS
 * after its receipt still has this long to be made durable before it counts as lost.
 */
export const ADMISSION_DEADLINE_MIN_MS = RECEIPT_TO_ADMISSION_MAX_MS + 5_000;
