-- Up Migration

-- 00-decisions §3 and 03 Authentication "Account CLI OAuth": the device grant (RFC 8628) of the
-- public client `service-management-cli` (docs/decisions/cli-oauth.md).

-- One approved device login: the "CLI session" of 03 (GET /v1/cli/sessions lists them). It is the
-- grant family: revoking it revokes its consent and every access and refresh token it holds.
CREATE TABLE cli_clients (
  id           text PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users (id),
  -- The consented scopes, full names (`service:cli:…`, `offline_access`).
  scopes       text[] NOT NULL,
  created_at   timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX cli_clients_user ON cli_clients (user_id, id);

-- A device authorization request, from `POST /oauth/device/code` until its code is exchanged.
-- The device code is kept as its SHA-256 only. The user code is short-lived and guessing it is
-- rate-limited, so it is kept as such, normalised (8 letters, no dash), unique among stored rows.
CREATE TABLE oauth_device_authorizations (
  device_code_hash text PRIMARY KEY,
  user_code        text NOT NULL UNIQUE,
  oauth_client_id  text NOT NULL,
  scopes           text[] NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'exchanged')),
  -- Who decided, and the CLI client the exchange created.
  user_id          text REFERENCES users (id),
  cli_client_id    text REFERENCES cli_clients (id),
  -- Seconds between polls; grows by 5 at each `slow_down` (RFC 8628 §3.5) and stays grown.
  interval_seconds integer NOT NULL,
  last_polled_at   timestamptz,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  CHECK ((status = 'pending') = (user_id IS NULL)),
  CHECK ((status = 'exchanged') = (cli_client_id IS NOT NULL))
);
CREATE INDEX oauth_device_authorizations_expiry ON oauth_device_authorizations (expires_at);

-- Access and refresh tokens of a CLI client, by SHA-256 only. A refresh token is spent
-- (`used_at`) when it is rotated; presenting a spent one again revokes the whole client.
CREATE TABLE cli_tokens (
  token_hash text PRIMARY KEY,
  client_id  text NOT NULL REFERENCES cli_clients (id),
  kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
  -- What the token itself carries: the client's scopes, or fewer after a narrowing refresh.
  scopes     text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  revoked_at timestamptz,
  CHECK (kind = 'refresh' OR used_at IS NULL)
);
CREATE INDEX cli_tokens_client ON cli_tokens (client_id);
CREATE INDEX cli_tokens_expiry ON cli_tokens (expires_at);

-- Down Migration
DROP TABLE cli_tokens, oauth_device_authorizations, cli_clients;
