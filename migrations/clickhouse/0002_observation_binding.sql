-- The nine values every row of a batch shares — the credential's binding at receipt: workspace,
-- account, workspace Integration id, Integration key, tenant, environment, mode, direction and
-- protocol — are stored in one column, `binding`, joined by '|' (none of them can hold one: they
-- are ids or fixed words). The old column names stay readable as ALIAS columns, computed when a
-- query reads them and never written, as does `operation_key` (00-decisions §4, from the
-- columns it is made of). Why: ClickHouse 18.16 pays for every column of every part, at insert
-- and at each merge; 35 columns down to 26 cost it 25–30 % less CPU per row for the same inserts
-- (bench/RESULTS.md, 2026-11-24 11:20 UTC), on the same cores as the edge.
--
-- 18.16 cannot turn a stored column into an ALIAS in place, so the table is rebuilt: the new one
-- is filled from the old one, then takes its name. ALIAS columns are not returned by `SELECT *`:
-- name them.
CREATE TABLE IF NOT EXISTS {db}.observations_0002 (
  connection_id            String,
  event_id                 String,
  batch_id                 String,
  binding                  String,
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

INSERT INTO {db}.observations_0002 (
  connection_id, event_id, batch_id, binding, envelope_version, event_type, method, route_template, payload_location,
  status_code, duration_ms, attempt, occurred_at_ms, received_at_ms, received_date, observed_fingerprint, schema_fingerprint,
  schema_inspected, schema_shape, redaction_policy_version, source_event_id_hash, idempotency_key_hash, hash_namespace,
  outcome_accepted, business_object_type, business_object_id_hash
)
SELECT
  connection_id, event_id, batch_id,
  concat(workspace_id, '|', account_id, '|', integration_id, '|', integration_key, '|', tenant_id, '|', environment_id, '|',
    mode, '|', direction, '|', protocol),
  envelope_version, event_type, method, route_template, payload_location,
  status_code, duration_ms, attempt, occurred_at_ms, received_at_ms, received_date, observed_fingerprint, schema_fingerprint,
  schema_inspected, schema_shape, redaction_policy_version, source_event_id_hash, idempotency_key_hash, hash_namespace,
  outcome_accepted, business_object_type, business_object_id_hash
FROM {db}.observations;

RENAME TABLE {db}.observations TO {db}.observations_0001, {db}.observations_0002 TO {db}.observations;

DROP TABLE {db}.observations_0001;
