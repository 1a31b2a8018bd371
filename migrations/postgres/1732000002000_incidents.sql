-- Up Migration

-- 00-decisions §5 "Incidents": at most one open incident per (connection, operationKey, kind).
-- PostgreSQL holds one row per incident and one per distinct finding (kind + path) of it, never
-- a row per observation: observations stay in ClickHouse.
CREATE TABLE incidents (
  id                  text PRIMARY KEY,
  connection_id       text NOT NULL REFERENCES connections (id),
  workspace_id        text NOT NULL REFERENCES workspaces (id),
  integration_id      text NOT NULL REFERENCES integrations (id),
  environment_id      text NOT NULL,
  mode                text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  -- The contract operation's key for schema drift; the observed operation's key
  -- (`<METHOD> <routeTemplate>:<payloadLocation>:<statusCode>`) for unknown operations and
  -- transport errors.
  operation_key       text NOT NULL,
  kind                text NOT NULL CHECK (kind IN ('schema-drift', 'unknown-operation', 'transport-errors', 'expected-outcome-missing')),
  status              text NOT NULL CHECK (status IN ('open', 'resolved')),
  resolution_state    text NOT NULL CHECK (resolution_state IN ('active', 'resolved_by_contract')),
  -- The contract version whose analysis last produced the incident's findings (null: none active).
  contract_version_id text,
  summary             text NOT NULL,
  -- Distinct observations (eventIds); see analysed_batches for why a redelivery never adds twice.
  affected_records    bigint NOT NULL CHECK (affected_records >= 0),
  -- The first 1,000 observations as evidence (03 replay fixture limit); evidence_truncated past it.
  observation_ids     text[] NOT NULL DEFAULT '{}',
  evidence_truncated  boolean NOT NULL DEFAULT false,
  first_observed_at   timestamptz NOT NULL,
  last_observed_at    timestamptz NOT NULL,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  resolved_at         timestamptz
);
CREATE UNIQUE INDEX incidents_one_open ON incidents (connection_id, operation_key, kind) WHERE status = 'open';
-- List order: createdAt descending, then id descending (as the other lists).
CREATE INDEX incidents_list ON incidents (connection_id, created_at DESC, (id COLLATE "C") DESC);

-- One entry per distinct (kind, path) of an incident: how many observations showed it, when.
CREATE TABLE incident_findings (
  incident_id        text NOT NULL REFERENCES incidents (id),
  kind               text NOT NULL,
  path               text NOT NULL,
  expected           text NOT NULL,
  observed           text NOT NULL,
  forbidden          boolean,
  observation_count  bigint NOT NULL CHECK (observation_count >= 0),
  first_observed_at  timestamptz NOT NULL,
  last_observed_at   timestamptz NOT NULL,
  PRIMARY KEY (incident_id, kind, path)
);

-- Analysis batches (one per ingest batch, never per observation) whose results are committed,
-- written in the same transaction as those results: a stream entry delivered again (its
-- analyzer died before XACK, or two analyzers raced on a claim) finds its batch here and adds
-- nothing. Pruned after ANALYZER_BATCH_MARKER_RETENTION_SECONDS.
CREATE TABLE analysed_batches (
  batch_id    text PRIMARY KEY,
  analysed_at timestamptz NOT NULL
);
CREATE INDEX analysed_batches_age ON analysed_batches (analysed_at);

-- reanalysed_through_ms: live batches received up to this instant (epoch ms) are already in the
-- counts of the connection's last reanalysis (analyzer/reanalysis.ts markRecounted).
-- reanalysed_revision: the activation's analysis revision (01 Activation result `revision`) the
-- last reanalysis reported against.
ALTER TABLE connections ADD COLUMN reanalysed_through_ms bigint NOT NULL DEFAULT 0,
  ADD COLUMN reanalysed_revision integer;

-- Down Migration
ALTER TABLE connections DROP COLUMN reanalysed_through_ms, DROP COLUMN reanalysed_revision;
DROP TABLE analysed_batches, incident_findings, incidents;
