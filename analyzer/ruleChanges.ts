import type pg from 'pg';
import type { Clock } from '../shared/clock.js';
import { withTransaction } from '../shared/db/transaction.js';
import { RULE_CHANGE_TOPIC, type RuleChangeJob } from '../shared/analysis/ruleChangeJob.js';
import { lockConnections } from './incidentStore.js';

/** Rule change jobs handled per transaction. */
const JOBS_PER_ROUND = 100;

/**
 * Applies the outbox's pending rule changes (02: "enabling, disabling or changing a rule applies
 * from then on"): the open deadlines of a rule now disabled, deleted or given another pair are
 * removed at once (firing would drop them anyway; removing them keeps the deadline index to the
 * rules that can still fire). New sources follow the rule as it is when their batch is analysed.
 * Returns the jobs handled.
 */
export async function applyRuleChanges(pool: pg.Pool, clock: Clock): Promise<number> {
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<{ id: string; payload: RuleChangeJob }>(
      'SELECT id, payload FROM outbox WHERE topic = $1 AND processed_at IS NULL ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED',
      [RULE_CHANGE_TOPIC, JOBS_PER_ROUND],
    );
    if (rows.length === 0) return 0;
    const now = clock.now();
    await lockConnections(
      db,
      rows.map((row) => row.payload.connectionId),
    );
    const ruleIds = [...new Set(rows.map((row) => row.payload.ruleId))];
    await db.query(
      `DELETE FROM rule_deadlines d WHERE d.rule_id = ANY($1::text[]) AND NOT EXISTS (
         SELECT 1 FROM reconciliation_rules r WHERE r.id = d.rule_id AND r.enabled
            AND r.source_event_type = d.source_event_type AND r.expected_object_type = d.expected_object_type)`,
      [ruleIds],
    );
    await db.query('UPDATE outbox SET processed_at = $2 WHERE id = ANY($1::bigint[])', [rows.map((row) => row.id), now]);
    return rows.length;
  });
}
