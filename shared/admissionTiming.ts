import type { IngestEdgeConfig } from './config.js';

/**
 * How long an admitted batch may stay "in flight" (admitted, its rows not yet known to be in
 * ClickHouse): queue wait and insert both time out after insertTimeoutMs (see GroupCommitWriter),
 * plus the group-commit wait and a margin. The one source of a timing two processes agree on:
 * the edge scores its unsettled batches `receivedAtMs + admissionInFlightMs` in
 * `RedisKeys.pendingAdmissions`, and the analyzer reads that set back into receipt times to know
 * which observations may still be on their way (analyzer/streamTime.ts).
 */
export function admissionInFlightMs(ingest: Pick<IngestEdgeConfig, 'insertTimeoutMs' | 'groupCommitMaxWaitMs' | 'groupCommitBusyWaitMs'>): number {
  const longestWait = Math.max(ingest.groupCommitMaxWaitMs, ingest.groupCommitBusyWaitMs);
  return 3 * ingest.insertTimeoutMs + longestWait + 5_000;
}

