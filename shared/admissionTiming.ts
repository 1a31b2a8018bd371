/**
 * The one timing the ingest edge and the analyzer must agree on. The edge stamps a batch with its
 * receipt time when the request is authenticated, then checks it (worker threads, possibly
 * queued under load), then admits it, which puts it in `RedisKeys.pendingAdmissions`. Between the
 * stamp and the admission the batch is in no set the analyzer can see, so the analyzer's stream
 * time stays at least this far behind the service clock (ANALYZER_RULE_GRACE_MS may not be lower),
 * and the edge refuses with 503 a batch it would admit later than this after its stamp
 * (ingest/pipeline.ts). Both sides import this constant; test/admissionTiming.test.ts pins them.
 */
export const RECEIPT_TO_ADMISSION_MAX_MS = 1_000;
