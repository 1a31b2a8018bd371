import { RedisKeys } from '../shared/redis.js';

/**
 * Redis keys that only the ingest edge uses (shared ones live in shared/redis.ts). Window keys
 * are hashes of per-second buckets; de-duplication hashes are per connection and period.
 */
export const IngestKeys = {
  integrationRequests: (connectionId: string) => `rl:req:int:${connectionId}`,
  integrationObservations: (connectionId: string) => `rl:obs:int:${connectionId}`,
  workspaceObservations: (workspaceId: string) => `rl:obs:ws:${workspaceId}`,
  sandboxAccountRequests: (accountId: string) => `rl:req:acct:${accountId}`,
  sandboxAccountEnvelopes: (accountId: string) => `rl:obs:acct:${accountId}`,
  connectionChecks: (connectionKey: string) => `rl:check:${connectionKey}`,
  /**
   * The de-duplication hash of a connection for one period (see ADMIT in admissionScripts.ts):
   * field eventId, value `<deadline ms>:<batch id>`. The script names them from the prefix
   * (`period` '').
   */
  eventIds: (connectionId: string, period: number | '') => `dd:${connectionId}:${period}`,
  committedBatch: (batchId: string) => `dc:${batchId}`,
  /** A batch's admission record until it is settled (see RECORD_FUNCTIONS in admissionScripts.ts). */
  admissionRecord: (batchId: string) => `ib:${batchId}`,
  /** Sorted set of the unsettled batches, scored by deadline (ms); the analyzer reads it too. */
  pendingBatches: RedisKeys.pendingAdmissions,
  /** Held by the process settling an overdue batch, so that several edges do not all query ClickHouse for it. */
  resolving: (batchId: string) => `ir:${batchId}`,
} as const;
