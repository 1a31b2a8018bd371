/**
 * Redis keys that only the ingest edge uses (shared ones live in shared/redis.ts). Window keys
 * are hashes of per-second buckets; de-duplication keys are per connection and eventId.
 */
export const IngestKeys = {
  integrationRequests: (connectionId: string) => `rl:req:int:${connectionId}`,
  integrationObservations: (connectionId: string) => `rl:obs:int:${connectionId}`,
  workspaceObservations: (workspaceId: string) => `rl:obs:ws:${workspaceId}`,
  sandboxAccountRequests: (accountId: string) => `rl:req:acct:${accountId}`,
  sandboxAccountEnvelopes: (accountId: string) => `rl:obs:acct:${accountId}`,
  connectionChecks: (connectionKey: string) => `rl:check:${connectionKey}`,
  /** De-duplication keys are this prefix plus the eventId (built inside the admission script). */
  eventIdPrefix: (connectionId: string) => `dd:${connectionId}:`,
  eventId: (connectionId: string, eventId: string) => `${IngestKeys.eventIdPrefix(connectionId)}${eventId}`,
  committedBatch: (batchId: string) => `dc:${batchId}`,
} as const;
