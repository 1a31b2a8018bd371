-- Up Migration

-- 02 "Second-mode setup": one reviewed setup of an Integration's missing mode connection. The
-- review is bound to the API key that made it and to the workspace authorization epoch it saw;
-- its snapshot and fingerprint never change. Completion is marked here under the row lock (so two
-- keys cannot both apply one review); the receipt and idempotency live in `operations`, whose row
-- takes this review's id. Which apply of competing reviews wins is decided by the Integration row
-- lock and, underneath, by the unique slot index `connections_slot`.
CREATE TABLE connection_setups (
  id                   text PRIMARY KEY,
  workspace_id         text NOT NULL REFERENCES workspaces (id),
  api_key_id           text NOT NULL,
  auth_epoch           bigint NOT NULL,
  integration_id       text NOT NULL REFERENCES integrations (id),
  destination_mode     text NOT NULL CHECK (destination_mode IN ('sandbox', 'live')),
  source_connection_id text,
  contract_version_ids text[] NOT NULL,
  rule_ids             text[] NOT NULL,
  snapshot             jsonb NOT NULL,
  fingerprint          text NOT NULL,
  expires_at           timestamptz NOT NULL,
  created_at           timestamptz NOT NULL,
  completed_at         timestamptz
);
CREATE INDEX connection_setups_integration ON connection_setups (integration_id);

-- Down Migration
DROP TABLE connection_setups;
