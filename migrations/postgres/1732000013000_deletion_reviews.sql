-- Up Migration

-- 03 "Integration deletion": one reviewed deletion (`del_`) of a whole Integration or of one of
-- its connections. The review names exactly one actor (the one who previewed confirms and reads
-- it), keeps the authorization epoch it was made under, the whitelisted snapshot and the
-- fingerprint to confirm, and what the deletion makes unreadable as it stood at the preview
-- (`evidence`, not bound by the fingerprint). Completion is marked here under the row lock; the
-- receipt and idempotency live in `operations`, whose row takes this review's id.
CREATE TABLE deletion_reviews (
  id             text PRIMARY KEY,
  workspace_id   text NOT NULL REFERENCES workspaces (id),
  api_key_id     text,
  user_id        text,
  auth_epoch     bigint NOT NULL,
  action         text NOT NULL CHECK (action IN ('integration.delete', 'connection.delete')),
  integration_id text NOT NULL REFERENCES integrations (id),
  connection_id  text REFERENCES connections (id),
  snapshot       jsonb NOT NULL,
  evidence       jsonb NOT NULL,
  fingerprint    text NOT NULL,
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL,
  completed_at   timestamptz,
  CONSTRAINT deletion_reviews_one_actor CHECK ((api_key_id IS NULL) <> (user_id IS NULL)),
  CONSTRAINT deletion_reviews_target CHECK ((action = 'connection.delete') = (connection_id IS NOT NULL))
);

-- Down Migration
DROP TABLE deletion_reviews;
