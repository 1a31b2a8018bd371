-- One row per accepted envelope (03 Ingestion), written by the ingest edge's group commit.
-- ReplacingMergeTree keyed by (connection_id, event_id) is the long-term de-duplication
-- backstop behind the bounded Redis eventId window: a row written twice (an insert that timed out
-- on the edge but committed in ClickHouse, then retried) collapses on merge and under FINAL.
-- Partitions are UTC months of receipt, so a copy received in another month is not collapsed.
-- Timestamps are UInt64 epoch milliseconds: ClickHouse 18.16 has no DateTime64.
-- Absent optional envelope members are stored as '' (strings) so no column is Nullable.
-- On a cluster (CLICKHOUSE_CLUSTER, shared/clickhouse/migrate.ts) each shard holds whole
-- connections, so the de-duplication of a connection's rows happens on one shard:
-- cluster: distributed observations by cityHash64(connection_id)
CREATE TABLE IF NOT EXISTS {db}.observations (
  connection_id            String,
  event_id                 String,
  batch_id                 String,
  workspace_id             String,
  account_id               String,
  integration_id           String,
  integration_key          String,
  tenant_id                String,
  environment_id           String,
  mode                     String,
  envelope_version         String,
  direction                String,
  protocol                 String,
  event_type               String,
  operation_key            String,
  method                   String,
  route_template           String,
  payload_location         String,
  status_code              UInt16,
  duration_ms              Float64,
  attempt                  UInt32,
  occurred_at_ms           UInt64,
  received_at_ms           UInt64,
  received_date            Date,
  observed_fingerprint     String,
  schema_fingerprint       String,
  schema_inspected         UInt8,
  schema_shape             String,
  redaction_policy_version String,
  source_event_id_hash     String,
  idempotency_key_hash     String,
  hash_namespace           String,
  outcome_accepted         UInt8,
  business_object_type     String,
  business_object_id_hash  String
) ENGINE = ReplacingMergeTree(received_at_ms)
PARTITION BY toYYYYMM(received_date)
ORDER BY (connection_id, event_id);
