-- Up Migration

-- 01 Authentication 4: setup OAuth tokens of the local setup tool (`service-setup-tool`), issued
-- by the same device grant as the account CLI's and kept in the same tables
-- (docs/decisions/cli.md "Setup OAuth tokens"). A setup grant is bound to one connection: one
-- approved Integration in one environment, in the workspace that connection belongs to.

-- The connection a setup tool's device request names; null for the CLI.
-- No foreign key: the request is unauthenticated, so the id is only checked at consent, and an
-- unknown one must not be told apart from a known one there.
ALTER TABLE oauth_device_authorizations ADD COLUMN connection_id text;

-- Which client a grant family belongs to, and for a setup grant its binding, fixed at consent.
ALTER TABLE cli_clients
  ADD COLUMN oauth_client_id text NOT NULL DEFAULT 'service-management-cli',
  ADD COLUMN workspace_id    text REFERENCES workspaces (id),
  ADD COLUMN connection_id   text REFERENCES connections (id),
  ADD CONSTRAINT cli_clients_binding CHECK ((connection_id IS NULL) = (workspace_id IS NULL));

-- Down Migration
ALTER TABLE cli_clients DROP CONSTRAINT cli_clients_binding, DROP COLUMN connection_id, DROP COLUMN workspace_id, DROP COLUMN oauth_client_id;
ALTER TABLE oauth_device_authorizations DROP COLUMN connection_id;
