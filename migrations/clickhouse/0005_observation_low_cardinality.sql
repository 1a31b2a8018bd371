-- schema_shape, binding and schema_fingerprint as LowCardinality(String): each holds few distinct
-- values per part (a connection sends the same few shapes, one binding, one fingerprint per
-- shape), and the shape's JSON is most of a row's bytes. Stored as a dictionary per part and an
-- index per row, they cost ClickHouse far less to insert and merge. Measured by inserting the same
-- 20,000 bench rows into both forms on 18.16 (bench/RESULTS.md, issue 32): 3.2–4.0 µs of
-- ClickHouse CPU per row as String, 1.0–1.3 as LowCardinality. Values, sorting key and readers are
-- unchanged (LowCardinality(String) reads and compares as String).
--
-- 18.16 creates LowCardinality columns only with allow_experimental_low_cardinality_type, which
-- the runner sends where the server still knows it (shared/clickhouse/migrate.ts). The table is
-- rebuilt as 0003 and 0004 did.
CREATE TABLE IF NOT EXISTS {db}.observations_0005 (
  connection_id            String,
  event_id                 String,
  batch_id                 String,
  binding                  LowCardinality(String),
  workspace_id             String ALIAS splitByChar('|', binding)[1],
  account_id               String ALIAS splitByChar('|', binding)[2],
  integration_id           String ALIAS splitByChar('|', binding)[3],
  integration_key          String ALIAS splitByChar('|', binding)[4],
  tenant_id                String ALIAS splitByChar('|', binding)[5],
  environment_id           String ALIAS splitByChar('|', binding)[6],
  mode                     String ALIAS splitByChar('|', binding)[7],
  direction                String ALIAS splitByChar('|', binding)[8],
  protocol                 String ALIAS splitByChar('|', binding)[9],
  envelope_version         String,
  event_type               String,
  operation_key            String ALIAS concat(method, ' ', route_template, ':', payload_location, ':', toString(status_code)),
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
  schema_fingerprint       LowCardinality(String),
  schema_inspected         UInt8,
  schema_shape             LowCardinality(String),
  shape_hash               FixedString(32) MATERIALIZED SHA256(schema_shape),
  redaction_policy_version String,
  source_event_id_hash     String,
  idempotency_key_hash     String,
  hash_namespace           String,
  outcome_accepted         UInt8,
  business_object_type     String,
  business_object_id_hash  String
) ENGINE = ReplacingMergeTree(received_at_ms)
PARTITION BY toYYYYMM(received_date)
ORDER BY (connection_id, received_at_ms, event_id)
SETTINGS index_granularity = 1024;

INSERT INTO {db}.observations_0005 (
  connection_id, event_id, batch_id, binding, envelope_version, event_type, method, route_template, payload_location,
  status_code, duration_ms, attempt, occurred_at_ms, received_at_ms, received_date, observed_fingerprint, schema_fingerprint,
  schema_inspected, schema_shape, redaction_policy_version, source_event_id_hash, idempotency_key_hash, hash_namespace,
  outcome_accepted, business_object_type, business_object_id_hash
)
SELECT
  connection_id, event_id, batch_id, binding, envelope_version, event_type, method, route_template, payload_location,
  status_code, duration_ms, attempt, occurred_at_ms, received_at_ms, received_date, observed_fingerprint, schema_fingerprint,
  schema_inspected, schema_shape, redaction_policy_version, source_event_id_hash, idempotency_key_hash, hash_namespace,
  outcome_accepted, business_object_type, business_object_id_hash
FROM {db}.observations;

RENAME TABLE {db}.observations TO {db}.observations_0004, {db}.observations_0005 TO {db}.observations;

DROP TABLE {db}.observations_0004;
