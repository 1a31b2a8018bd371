-- Up Migration

-- 03 Reviewed repairs 5 and Account CLI OAuth: an account CLI access token may act on the
-- workspace management routes. What it does belongs to the user AND the CLI client together
-- ("another user, client or authorization epoch cannot claim the receipt"), so an operation and
-- a review made through it name the user (`user_id`) and the client (`cli_client_id`); a console
-- user's and an API key's leave `cli_client_id` null.
ALTER TABLE operations
  ADD COLUMN cli_client_id text REFERENCES cli_clients (id),
  ADD CONSTRAINT operations_cli_client_user CHECK (cli_client_id IS NULL OR user_id IS NOT NULL);

ALTER TABLE configuration_reviews
  ADD COLUMN cli_client_id text REFERENCES cli_clients (id),
  ADD CONSTRAINT configuration_reviews_cli_client_user CHECK (cli_client_id IS NULL OR user_id IS NOT NULL);

ALTER TABLE deletion_reviews
  ADD COLUMN cli_client_id text REFERENCES cli_clients (id),
  ADD CONSTRAINT deletion_reviews_cli_client_user CHECK (cli_client_id IS NULL OR user_id IS NOT NULL);

-- Down Migration
DELETE FROM deletion_reviews WHERE cli_client_id IS NOT NULL;
DELETE FROM configuration_reviews WHERE cli_client_id IS NOT NULL;
DELETE FROM operations WHERE cli_client_id IS NOT NULL;
ALTER TABLE deletion_reviews DROP CONSTRAINT deletion_reviews_cli_client_user, DROP COLUMN cli_client_id;
ALTER TABLE configuration_reviews DROP CONSTRAINT configuration_reviews_cli_client_user, DROP COLUMN cli_client_id;
ALTER TABLE operations DROP CONSTRAINT operations_cli_client_user, DROP COLUMN cli_client_id;
