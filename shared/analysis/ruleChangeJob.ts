import type { Queryable } from '../db/pool.js';

/** The outbox topic of rule changes: written by each rule mutation, read by the analyzer. */
export const RULE_CHANGE_TOPIC = 'rule-change';

/** The payload of a rule change job (written in the mutation's transaction, 02 Reconciliation rules). */
export interface RuleChangeJob {
  connectionId: string;
  ruleId: string;
  action: 'rule.create' | 'rule.update' | 'rule.delete';
  /** The connection's configuration revision after the mutation. */
  revision: string;
}

/** Enqueues the analysis of a rule change in the caller's transaction. */
export async function enqueueRuleChange(db: Queryable, job: RuleChangeJob, now: Date): Promise<void> {
  await db.query('INSERT INTO outbox (topic, payload, created_at) VALUES ($1, $2, $3)', [RULE_CHANGE_TOPIC, JSON.stringify(job), now]);
}
