-- Up Migration

-- 02 "Browser session adapters": a review of configuration copy, compensation or second-mode
-- setup is made by a workspace API key or by a console user acting as owner or admin. The one who
-- previewed is the one who applies and recovers, so the review names exactly one of them.
ALTER TABLE configuration_reviews
  ALTER COLUMN api_key_id DROP NOT NULL,
  ADD COLUMN user_id text,
  ADD CONSTRAINT configuration_reviews_one_actor CHECK ((api_key_id IS NULL) <> (user_id IS NULL));

ALTER TABLE connection_setups
  ALTER COLUMN api_key_id DROP NOT NULL,
  ADD COLUMN user_id text,
  ADD CONSTRAINT connection_setups_one_actor CHECK ((api_key_id IS NULL) <> (user_id IS NULL));

-- Down Migration
DELETE FROM configuration_reviews WHERE api_key_id IS NULL;
DELETE FROM connection_setups WHERE api_key_id IS NULL;
ALTER TABLE connection_setups
  DROP CONSTRAINT connection_setups_one_actor,
  DROP COLUMN user_id,
  ALTER COLUMN api_key_id SET NOT NULL;
ALTER TABLE configuration_reviews
  DROP CONSTRAINT configuration_reviews_one_actor,
  DROP COLUMN user_id,
  ALTER COLUMN api_key_id SET NOT NULL;
