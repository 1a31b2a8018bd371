-- Up Migration

-- 00-decisions §5 "Reconciliation": one row per analysed source observation of an enabled rule
-- still waiting for its expected outcome. Written in the transaction that claims the source's
-- batch, deleted by the transaction that analyses its follower or that fires it, so across
-- analyzer restarts a deadline is neither lost nor fired twice. The table holds only open
-- deadlines: its size is the source rate times the delay, never the observation history.
CREATE TABLE rule_deadlines (
  rule_id              text NOT NULL,
  source_event_id      text NOT NULL,
  connection_id        text NOT NULL,
  -- The rule's pair when the source was analysed: a deadline of a since-changed pair is dropped.
  source_event_type    text NOT NULL,
  expected_object_type text NOT NULL,
  source_event_id_hash text NOT NULL,
  occurred_at_ms       bigint NOT NULL,
  -- occurred_at_ms + maxDelayMs at the time the source was analysed.
  due_at_ms            bigint NOT NULL,
  PRIMARY KEY (rule_id, source_event_id)
);
-- Firing finds due deadlines by this index; followers find theirs by the other.
CREATE INDEX rule_deadlines_due ON rule_deadlines (due_at_ms);
CREATE INDEX rule_deadlines_follower ON rule_deadlines (connection_id, source_event_id_hash);
-- A queue: almost every row is deleted within seconds of its insert. Vacuumed by dead-row count
-- alone (not a share of a table that stays small), so its pages are reused instead of growing.
ALTER TABLE rule_deadlines SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_cost_delay = 0);

-- Down Migration
DROP TABLE rule_deadlines;
