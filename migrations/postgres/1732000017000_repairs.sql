-- Up Migration

-- 03 "Replay dataset": an incident's observations frozen at repair request time, at most 1,000
-- fixtures, each the observed shape (never a value) with its observation id. Immutable; the same
-- evidence of one incident freezes to one dataset (its manifest hash).
CREATE TABLE replay_datasets (
  id                       text PRIMARY KEY,
  workspace_id             text NOT NULL REFERENCES workspaces (id),
  connection_id            text NOT NULL REFERENCES connections (id),
  incident_id              text NOT NULL REFERENCES incidents (id),
  mode                     text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  -- The contract operation the incident's findings were made against: what a repair patches.
  contract_version_id      text NOT NULL REFERENCES contract_versions (id),
  contract_operation_id    text NOT NULL REFERENCES contract_operations (id),
  operation_key            text NOT NULL,
  manifest_hash            text NOT NULL,
  fixture_count            integer NOT NULL CHECK (fixture_count BETWEEN 1 AND 1000),
  redaction_policy_version text NOT NULL,
  -- Sorted (bytewise); fixtures are [{observationId, shape}] in the same order.
  observation_ids          text[] NOT NULL,
  fixtures                 jsonb NOT NULL,
  created_at               timestamptz NOT NULL,
  UNIQUE (incident_id, manifest_hash)
);
CREATE INDEX replay_datasets_list ON replay_datasets (incident_id, created_at DESC, (id COLLATE "C") DESC);

-- 03 "Repair proposal". In progress: queued, generating, validating (a worker holds it until
-- lease_until; attempts counts the claims, at most three). awaiting_approval carries a valid
-- candidate and a passed replay; approved and rejected are decisions; failed carries error_code.
CREATE TABLE repair_proposals (
  id                     text PRIMARY KEY,
  workspace_id           text NOT NULL REFERENCES workspaces (id),
  account_id             text NOT NULL,
  connection_id          text NOT NULL REFERENCES connections (id),
  incident_id            text NOT NULL REFERENCES incidents (id),
  mode                   text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  environment_id         text NOT NULL,
  dataset_id             text NOT NULL REFERENCES replay_datasets (id),
  contract_version_id    text NOT NULL REFERENCES contract_versions (id),
  contract_operation_id  text NOT NULL REFERENCES contract_operations (id),
  operation_key          text NOT NULL,
  status                 text NOT NULL CHECK (status IN ('queued', 'generating', 'validating', 'awaiting_approval', 'approved', 'rejected', 'failed')),
  error_code             text,
  attempts               integer NOT NULL DEFAULT 0,
  lease_until            timestamptz,
  -- {baseSchemaFingerprint, patch, schema, schemaFingerprint, changes} (shared/repairs/types.ts)
  candidate              jsonb,
  candidate_fingerprint  text,
  -- 03 Decision preview `review.validation`: {id, valid, replayPassed, replayRunId, replayStatus,
  -- adapterFingerprint, schemaChecksFingerprint}
  validation             jsonb,
  validation_run_id      text,
  -- {status, approvalRecordId, decidedAt}
  decision               jsonb,
  requested_by_user_id   text NOT NULL,
  requested_by_client_id text,
  -- The repair.request operation (cliop_) that created it.
  request_operation_id   text NOT NULL,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL
);
-- 03 Limits: one active proposal per incident (repair_already_pending).
CREATE UNIQUE INDEX repair_proposals_one_active ON repair_proposals (incident_id)
  WHERE status IN ('queued', 'generating', 'validating', 'awaiting_approval');
CREATE INDEX repair_proposals_work ON repair_proposals (created_at) WHERE status IN ('queued', 'generating', 'validating');
CREATE INDEX repair_proposals_workspace_work ON repair_proposals (workspace_id) WHERE status IN ('queued', 'generating', 'validating');
CREATE INDEX repair_proposals_list ON repair_proposals (incident_id, created_at DESC, (id COLLATE "C") DESC);
CREATE INDEX repair_proposals_account_month ON repair_proposals (account_id, mode, created_at);

-- 03 "Replay run": the replay of every fixture of a dataset against one proposal's candidate.
-- One run per proposal: a worker that dies and is retried cannot record a second.
CREATE TABLE replay_runs (
  id                  text PRIMARY KEY,
  workspace_id        text NOT NULL REFERENCES workspaces (id),
  dataset_id          text NOT NULL REFERENCES replay_datasets (id),
  proposal_id         text NOT NULL UNIQUE REFERENCES repair_proposals (id),
  connection_id       text NOT NULL REFERENCES connections (id),
  mode                text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  status              text NOT NULL CHECK (status IN ('passed', 'failed')),
  adapter_fingerprint text NOT NULL,
  adapter_version     text NOT NULL,
  error_code          text,
  fixture_count       integer NOT NULL,
  conforming_count    integer NOT NULL,
  queued_at           timestamptz NOT NULL,
  started_at          timestamptz NOT NULL,
  finished_at         timestamptz NOT NULL
);

-- 03 "Decision preview": a CLI operation (cliop_) in state previewed, bound to one user, one CLI
-- client and the workspace authorization epoch; apply completes it (the receipt is the
-- operations row with the same id).
CREATE TABLE repair_decision_previews (
  id                   text PRIMARY KEY,
  workspace_id         text NOT NULL REFERENCES workspaces (id),
  connection_id        text NOT NULL REFERENCES connections (id),
  proposal_id          text NOT NULL REFERENCES repair_proposals (id),
  user_id              text NOT NULL,
  cli_client_id        text NOT NULL,
  auth_epoch           bigint NOT NULL,
  decision             text NOT NULL CHECK (decision IN ('approved', 'rejected')),
  rationale            text NOT NULL,
  approval_fingerprint text NOT NULL,
  review               jsonb NOT NULL,
  expires_at           timestamptz NOT NULL,
  created_at           timestamptz NOT NULL,
  completed_at         timestamptz
);
CREATE INDEX repair_decision_previews_proposal ON repair_decision_previews (proposal_id);

-- The immutable approval record of a decision (03 CLI operations: reviewer decision, immutable
-- approval, audit and receipt commit together). Never updated or deleted.
CREATE TABLE repair_approvals (
  id                   text PRIMARY KEY,
  workspace_id         text NOT NULL REFERENCES workspaces (id),
  connection_id        text NOT NULL REFERENCES connections (id),
  proposal_id          text NOT NULL UNIQUE REFERENCES repair_proposals (id),
  operation_id         text NOT NULL,
  decision             text NOT NULL CHECK (decision IN ('approved', 'rejected')),
  rationale            text NOT NULL,
  approval_fingerprint text NOT NULL,
  review               jsonb NOT NULL,
  user_id              text NOT NULL,
  cli_client_id        text NOT NULL,
  created_at           timestamptz NOT NULL
);
CREATE FUNCTION repair_approvals_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'repair approvals are immutable';
END $$;
CREATE TRIGGER repair_approvals_immutable BEFORE UPDATE OR DELETE ON repair_approvals
  FOR EACH ROW EXECUTE FUNCTION repair_approvals_immutable();

-- The workspace authorization epoch a CLI operation was made under (03 Reviewed repairs 3:
-- another authorization epoch cannot claim the receipt).
ALTER TABLE operations ADD COLUMN auth_epoch bigint;

-- Down Migration
ALTER TABLE operations DROP COLUMN auth_epoch;
DROP TRIGGER repair_approvals_immutable ON repair_approvals;
DROP FUNCTION repair_approvals_immutable();
DROP TABLE repair_approvals, repair_decision_previews, replay_runs, repair_proposals, replay_datasets;
