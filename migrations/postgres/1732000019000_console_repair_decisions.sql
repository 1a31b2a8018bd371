-- Up Migration

-- Issue 31: the console decides repairs too. A decision preview and an approval made through a
-- browser session name the user and no CLI client (null); one made through the CLI names its
-- client. Every lookup that binds a preview to its maker compares the client with
-- IS NOT DISTINCT FROM, so a console preview is applied only by the same user from the console,
-- and a CLI preview only through the same CLI client (03: another client or actor answers
-- `operation_not_found`).
ALTER TABLE repair_decision_previews ALTER COLUMN cli_client_id DROP NOT NULL;
ALTER TABLE repair_approvals ALTER COLUMN cli_client_id DROP NOT NULL;

-- Down Migration
-- Fails while a console decision exists: an approval is immutable and has no client to be given.
ALTER TABLE repair_approvals ALTER COLUMN cli_client_id SET NOT NULL;
ALTER TABLE repair_decision_previews ALTER COLUMN cli_client_id SET NOT NULL;
