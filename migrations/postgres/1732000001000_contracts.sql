-- Up Migration

-- 01 "Contract version": immutable evidence of one registration. The document, its operations and
-- their fingerprints never change after insert; only the lifecycle columns move (draft → active →
-- superseded → active on rollback).
CREATE TABLE contract_versions (
  id                       text PRIMARY KEY,
  connection_id            text NOT NULL REFERENCES connections (id),
  workspace_id             text NOT NULL REFERENCES workspaces (id),
  declared_version         text NOT NULL,
  format                   text NOT NULL CHECK (format IN ('openapi', 'json-schema')),
  -- `json-schema`, `openapi-3.0` or `openapi-3.1` (01: values other than json-schema are not shown).
  imported_from            text NOT NULL,
  -- JCS fingerprint of the imported document (00-decisions §4).
  fingerprint              text NOT NULL,
  document                 jsonb NOT NULL,
  operation_count          integer NOT NULL CHECK (operation_count > 0),
  -- Fingerprint over {format, document fingerprint, selector, every operation key and schema
  -- fingerprint}: equal signatures under one declared version are an identical draft retry.
  content_signature        text NOT NULL,
  skipped                  jsonb NOT NULL DEFAULT '[]',
  lifecycle_status         text NOT NULL CHECK (lifecycle_status IN ('draft', 'active', 'superseded')),
  -- The connection revision the registration started from and the one it committed; an identical
  -- retry of the original request (same expectation) is answered with the committed one.
  registered_from_revision text NOT NULL,
  connection_revision      text NOT NULL,
  api_key_id               text,
  created_at               timestamptz NOT NULL,
  activated_at             timestamptz,
  superseded_at            timestamptz,
  CONSTRAINT contract_versions_declared_version_key UNIQUE (connection_id, declared_version)
);
-- List order of 01: createdAt descending, then id descending (ids compared bytewise).
CREATE INDEX contract_versions_list ON contract_versions (connection_id, created_at DESC, (id COLLATE "C") DESC);
-- At most one active version per connection.
CREATE UNIQUE INDEX contract_versions_one_active ON contract_versions (connection_id) WHERE lifecycle_status = 'active';

-- 01 "Contract operation": one imported operation of a version, in import order.
CREATE TABLE contract_operations (
  id                  text PRIMARY KEY,
  contract_version_id text NOT NULL REFERENCES contract_versions (id),
  operation_key       text NOT NULL,
  direction           text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  protocol            text NOT NULL CHECK (protocol IN ('http-api', 'http-webhook', 'scheduled-feed', 'queue')),
  method              text NOT NULL,
  route_template      text NOT NULL,
  event_type          text,
  payload_location    text NOT NULL CHECK (payload_location IN ('request', 'response', 'message')),
  status_selector     text NOT NULL,
  fingerprint         text NOT NULL,
  schema              jsonb NOT NULL,
  position            integer NOT NULL,
  UNIQUE (contract_version_id, operation_key),
  UNIQUE (contract_version_id, position)
);

-- 01 "Activation result": one row per activation or rollback, the history of the active pointer.
CREATE TABLE contract_activations (
  id                                  text PRIMARY KEY,
  connection_id                       text NOT NULL REFERENCES connections (id),
  workspace_id                        text NOT NULL REFERENCES workspaces (id),
  contract_version_id                 text NOT NULL REFERENCES contract_versions (id),
  previous_active_contract_version_id text,
  reason                              text NOT NULL CHECK (reason IN ('promote', 'rollback')),
  analysis_revision                   integer NOT NULL,
  connection_revision                 text NOT NULL,
  api_key_id                          text,
  created_at                          timestamptz NOT NULL
);
CREATE INDEX contract_activations_connection ON contract_activations (connection_id, created_at);

-- 01: the integer `revision` of an activation result, a counter separate from connection revisions.
ALTER TABLE connections ADD COLUMN analysis_revision integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE connections DROP COLUMN analysis_revision;
DROP TABLE contract_activations, contract_operations, contract_versions;
