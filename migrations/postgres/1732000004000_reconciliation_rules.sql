-- Up Migration

-- 02 Reconciliation rule: per connection, a source event type that should be followed by an object
-- of an expected type within maxDelayMs. The pair is unique within a connection. A deleted rule is
-- removed; its definition stays in the delete receipt (operations.receipt).
CREATE TABLE reconciliation_rules (
  id                   text PRIMARY KEY,
  connection_id        text NOT NULL REFERENCES connections (id),
  workspace_id         text NOT NULL REFERENCES workspaces (id),
  source_event_type    text NOT NULL,
  expected_object_type text NOT NULL,
  max_delay_ms         integer NOT NULL CHECK (max_delay_ms BETWEEN 1000 AND 86400000),
  enabled              boolean NOT NULL,
  last_evaluated_at    timestamptz,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL
);
CREATE UNIQUE INDEX reconciliation_rules_pair ON reconciliation_rules (connection_id, source_event_type, expected_object_type);
CREATE INDEX reconciliation_rules_list ON reconciliation_rules (connection_id, created_at, id);

-- The rule whose `expected-outcome-missing` findings an incident holds: a rule with incident
-- history cannot be deleted (02: 409 expected_outcome_has_incident_history).
ALTER TABLE incidents ADD COLUMN rule_id text;
CREATE INDEX incidents_rule ON incidents (rule_id) WHERE rule_id IS NOT NULL;

-- Down Migration
DROP INDEX incidents_rule;
ALTER TABLE incidents DROP COLUMN rule_id;
DROP TABLE reconciliation_rules;
