-- One row per accepted envelope. ReplacingMergeTree keyed by connection and eventId is the
-- long-term de-duplication backstop behind the bounded Redis eventId window (issue: ingest).
-- Timestamps are UInt64 epoch milliseconds: ClickHouse 18.16 has no DateTime64.
CREATE TABLE IF NOT EXISTS {db}.observations (
  connection_id      String,
  event_id           String,
  workspace_id       String,
  integration_id     String,
  tenant_id          String,
  environment_id     String,
  mode               String,
  envelope_version   String,
  direction          String,
  protocol           String,
  event_type         String,
  operation_key      String,
  method             String,
  route_template     String,
  payload_location   String,
  status_code        UInt16,
  duration_ms        Float64,
  attempt            UInt32,
  occurred_at_ms     UInt64,
  received_at_ms     UInt64,
  received_date      Date,
  schema_fingerprint String,
  schema_inspected   UInt8,
  observed_fingerprint String,
  outcome_accepted   UInt8,
  envelope           String
) ENGINE = ReplacingMergeTree(received_at_ms)
PARTITION BY toYYYYMM(received_date)
ORDER BY (connection_id, event_id);
