-- Up Migration

-- 00-decisions §4: every revision is drawn from this one sequence, so no value ever repeats.
CREATE SEQUENCE revision_seq;

CREATE TABLE users (
  id                text PRIMARY KEY,
  email             text NOT NULL,
  name              text NOT NULL,
  password_hash     text NOT NULL,
  email_verified_at timestamptz,
  created_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE email_verifications (
  token_hash text PRIMARY KEY,
  user_id    text NOT NULL REFERENCES users (id),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

-- Mail waiting for delivery; the operator CLI prints it (00-decisions §3).
CREATE TABLE email_outbox (
  id         bigserial PRIMARY KEY,
  user_id    text NOT NULL REFERENCES users (id),
  to_email   text NOT NULL,
  kind       text NOT NULL,
  body       jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  sent_at    timestamptz
);

CREATE TABLE sessions (
  id         text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  user_id    text NOT NULL REFERENCES users (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE TABLE accounts (
  id                        text PRIMARY KEY,
  name                      text NOT NULL,
  plan                      text NOT NULL DEFAULT 'developer',
  status                    text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  sandbox_monthly_allowance integer CHECK (sandbox_monthly_allowance >= 0),
  created_at                timestamptz NOT NULL
);

CREATE TABLE account_members (
  account_id text NOT NULL REFERENCES accounts (id),
  user_id    text NOT NULL REFERENCES users (id),
  role       text NOT NULL CHECK (role IN ('owner', 'admin')),
  PRIMARY KEY (account_id, user_id)
);
CREATE INDEX account_members_user ON account_members (user_id);

CREATE TABLE workspaces (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL UNIQUE,
  account_id  text NOT NULL REFERENCES accounts (id),
  name        text NOT NULL,
  slug        text NOT NULL,
  model       text NOT NULL CHECK (model IN ('canonical', 'legacy')),
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  active      boolean NOT NULL DEFAULT false,
  -- Bumped by archive, restore and membership changes: the "authorization epoch" of 01.
  auth_epoch  bigint NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL,
  archived_at timestamptz
);
CREATE UNIQUE INDEX workspaces_slug_key ON workspaces (slug);
CREATE INDEX workspaces_account ON workspaces (account_id, status);

CREATE TABLE workspace_members (
  workspace_id text NOT NULL REFERENCES workspaces (id),
  user_id      text NOT NULL REFERENCES users (id),
  role         text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members (user_id);

CREATE TABLE environments (
  id           text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces (id),
  name         text NOT NULL,
  slug         text NOT NULL,
  category     text NOT NULL CHECK (category IN ('sandbox', 'live', 'development', 'production', 'staging')),
  mode         text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  is_default   boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL,
  UNIQUE (workspace_id, slug)
);

CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces (id),
  name         text NOT NULL DEFAULT '',
  key_hash     text NOT NULL UNIQUE,
  scopes       text[] NOT NULL,
  created_by   text,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

CREATE TABLE integrations (
  id              text PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id),
  name            text NOT NULL,
  provider        text NOT NULL,
  direction       text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  protocol        text NOT NULL CHECK (protocol IN ('http-api', 'http-webhook', 'scheduled-feed', 'queue')),
  integration_key text NOT NULL UNIQUE,
  revision        text NOT NULL,
  created_at      timestamptz NOT NULL,
  deleted_at      timestamptz
);
CREATE INDEX integrations_workspace ON integrations (workspace_id, id);

CREATE TABLE connections (
  id                         text PRIMARY KEY,
  integration_id             text NOT NULL REFERENCES integrations (id),
  workspace_id               text NOT NULL REFERENCES workspaces (id),
  environment_id             text NOT NULL REFERENCES environments (id),
  mode                       text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  connection_key             text NOT NULL UNIQUE,
  revision                   text NOT NULL,
  credential_status          text NOT NULL DEFAULT 'not_issued' CHECK (credential_status IN ('not_issued', 'active', 'revoked')),
  -- Bumped on every issue, rotation and revocation and mirrored to Redis for the ingest edge.
  credential_epoch           bigint NOT NULL DEFAULT 0,
  active_contract_version_id text,
  latest_observation_at      timestamptz,
  open_incident_count        integer NOT NULL DEFAULT 0,
  created_at                 timestamptz NOT NULL,
  deleted_at                 timestamptz
);
CREATE UNIQUE INDEX connections_slot ON connections (integration_id, mode) WHERE deleted_at IS NULL;
CREATE INDEX connections_workspace ON connections (workspace_id);

CREATE TABLE credentials (
  id           text PRIMARY KEY,
  connection_id text NOT NULL REFERENCES connections (id),
  token_hash   text NOT NULL UNIQUE,
  -- AES-256-GCM sealed token: the HMAC key of ingestion (00-decisions §4).
  token_sealed text NOT NULL,
  epoch        bigint NOT NULL,
  status       text NOT NULL CHECK (status IN ('active', 'rotated', 'revoked')),
  issued_at    timestamptz NOT NULL,
  ended_at     timestamptz
);
CREATE UNIQUE INDEX credentials_one_active ON credentials (connection_id) WHERE status = 'active';

-- One mechanism for idempotency and receipts: every operation that takes an Idempotency-Key
-- stores its credential-free receipt here, keyed per workspace.
CREATE TABLE operations (
  id                  text PRIMARY KEY,
  kind                text NOT NULL,
  workspace_id        text NOT NULL REFERENCES workspaces (id),
  api_key_id          text,
  user_id             text,
  idempotency_key     text,
  request_fingerprint text NOT NULL,
  integration_id      text,
  connection_id       text,
  recorded_revision   text,
  status_code         integer NOT NULL,
  receipt             jsonb NOT NULL,
  created_at          timestamptz NOT NULL
);
CREATE UNIQUE INDEX operations_idempotency ON operations (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE audit_events (
  id           bigserial PRIMARY KEY,
  workspace_id text,
  actor_type   text NOT NULL CHECK (actor_type IN ('api_key', 'user', 'operator', 'system')),
  actor_id     text,
  action       text NOT NULL,
  target_id    text,
  metadata     jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL
);
CREATE INDEX audit_events_workspace ON audit_events (workspace_id, id);

-- Work handed to another process in the same transaction as the change that caused it.
CREATE TABLE outbox (
  id           bigserial PRIMARY KEY,
  topic        text NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL,
  processed_at timestamptz
);
CREATE INDEX outbox_pending ON outbox (topic, id) WHERE processed_at IS NULL;

-- Down Migration
DROP TABLE outbox, audit_events, operations, credentials, connections, integrations, api_keys,
  environments, workspace_members, workspaces, account_members, accounts, sessions, email_outbox,
  email_verifications, users;
DROP SEQUENCE revision_seq;
