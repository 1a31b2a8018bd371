-- Up Migration

-- 02 "Operation review": one reviewed configuration copy (`concopy_`) or compensation
-- (`concomp_`). The review is immutable; its completion is the `operations` row with the same id
-- (receipt, Idempotency-Key, proof), written by the apply transaction. Expiry is `expires_at` on
-- the service clock; reads never extend it.
CREATE TABLE configuration_reviews (
  id                           text PRIMARY KEY,
  action                       text NOT NULL CHECK (action IN ('configuration.copy', 'configuration.compensate')),
  workspace_id                 text NOT NULL REFERENCES workspaces (id),
  -- 02 Authentication 2: the key of the review is the key of apply and of every status read.
  api_key_id                   text NOT NULL,
  -- The workspace authorization epoch the review was made under: any change since is stale.
  auth_epoch                   text NOT NULL,
  integration_id               text NOT NULL,
  integration_revision         text NOT NULL,
  destination_connection_id    text NOT NULL,
  destination_revision         text NOT NULL,
  destination_credential_epoch bigint NOT NULL,
  -- Copy: the source connection and its reviewed revision. Compensation: null (source edits do
  -- not affect a reversal).
  source_connection_id         text,
  source_revision              text,
  -- Compensation: the copy it reverses.
  original_operation_id        text,
  -- The approval fingerprint the client presents; the snapshot carries its own fingerprint.
  fingerprint                  text NOT NULL,
  snapshot                     jsonb NOT NULL,
  copied_artifacts             jsonb,
  expires_at                   timestamptz NOT NULL,
  created_at                   timestamptz NOT NULL
);
CREATE INDEX configuration_reviews_original ON configuration_reviews (original_operation_id) WHERE original_operation_id IS NOT NULL;

-- Down Migration
DROP TABLE configuration_reviews;
