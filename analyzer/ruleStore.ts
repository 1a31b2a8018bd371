import type pg from 'pg';

/**
 * The analyzer's reconciliation reads and writes (00-decisions §5 "Reconciliation"): the enabled
 * rules of the connections being analysed, and `rule_deadlines`, the open deadlines of sources
 * whose outcome has not been seen. Each runs inside the caller's transaction, after the caller
 * locked the connections concerned (incidentStore.lockConnections), so a deadline is written,
 * satisfied or fired by one transaction only.
 */

export interface EvaluatedRule {
  id: string;
  connectionId: string;
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
}

interface RuleRow {
  id: string;
  connection_id: string;
  source_event_type: string;
  expected_object_type: string;
  max_delay_ms: number;
}

const toRule = (row: RuleRow): EvaluatedRule => ({
  id: row.id,
  connectionId: row.connection_id,
  sourceEventType: row.source_event_type,
  expectedObjectType: row.expected_object_type,
  maxDelayMs: row.max_delay_ms,
});

/** The enabled rules of these connections, by connection. */
export async function enabledRulesOf(db: pg.PoolClient, connectionIds: readonly string[]): Promise<Map<string, EvaluatedRule[]>> {
  const byConnection = new Map<string, EvaluatedRule[]>();
  if (connectionIds.length === 0) return byConnection;
  const { rows } = await db.query<RuleRow>({
    name: 'analyzer.enabledRulesOf',
    text: `SELECT id, connection_id, source_event_type, expected_object_type, max_delay_ms
             FROM reconciliation_rules WHERE connection_id = ANY($1::text[]) AND enabled ORDER BY id`,
    values: [connectionIds],
  });
  for (const row of rows) {
    const rule = toRule(row);
    const list = byConnection.get(rule.connectionId);
    if (list === undefined) byConnection.set(rule.connectionId, [rule]);
    else list.push(rule);
  }
  return byConnection;
}

/** The rules by id, as they are now (deleted ones absent); enabled or not. */
export async function currentRules(
  db: pg.PoolClient,
  ruleIds: readonly string[],
): Promise<Map<string, EvaluatedRule & { enabled: boolean }>> {
  const { rows } = await db.query<RuleRow & { enabled: boolean }>(
    `SELECT id, connection_id, source_event_type, expected_object_type, max_delay_ms, enabled
       FROM reconciliation_rules WHERE id = ANY($1::text[])`,
    [[...new Set(ruleIds)]],
  );
  return new Map(rows.map((row) => [row.id, { ...toRule(row), enabled: row.enabled }]));
}

/** A source observation of a rule, waiting for its outcome until dueAtMs. */
export interface Deadline {
  ruleId: string;
  sourceEventId: string;
  connectionId: string;
  sourceEventType: string;
  expectedObjectType: string;
  sourceEventIdHash: string;
  occurredAtMs: number;
  dueAtMs: number;
}

interface DeadlineRow {
  rule_id: string;
  source_event_id: string;
  connection_id: string;
  source_event_type: string;
  expected_object_type: string;
  source_event_id_hash: string;
  occurred_at_ms: string;
  due_at_ms: string;
}

const DEADLINE_COLUMNS =
  'rule_id, source_event_id, connection_id, source_event_type, expected_object_type, source_event_id_hash, occurred_at_ms, due_at_ms';

const toDeadline = (row: DeadlineRow): Deadline => ({
  ruleId: row.rule_id,
  sourceEventId: row.source_event_id,
  connectionId: row.connection_id,
  sourceEventType: row.source_event_type,
  expectedObjectType: row.expected_object_type,
  sourceEventIdHash: row.source_event_id_hash,
  occurredAtMs: Number(row.occurred_at_ms),
  dueAtMs: Number(row.due_at_ms),
});

/** Stores new deadlines in one statement; one already stored (the same rule and source) is kept. */
export async function insertDeadlines(db: pg.PoolClient, deadlines: readonly Deadline[]): Promise<void> {
  if (deadlines.length === 0) return;
  await db.query(
    `INSERT INTO rule_deadlines (${DEADLINE_COLUMNS})
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[])
     ON CONFLICT (rule_id, source_event_id) DO NOTHING`,
    [
      deadlines.map((d) => d.ruleId),
      deadlines.map((d) => d.sourceEventId),
      deadlines.map((d) => d.connectionId),
      deadlines.map((d) => d.sourceEventType),
      deadlines.map((d) => d.expectedObjectType),
      deadlines.map((d) => d.sourceEventIdHash),
      deadlines.map((d) => d.occurredAtMs),
      deadlines.map((d) => d.dueAtMs),
    ],
  );
}

/** An outcome: an observation with a business object type and a correlation hash. */
export interface Outcome {
  connectionId: string;
  businessObjectType: string;
  sourceEventIdHash: string;
  occurredAtMs: number;
}

/**
 * Removes the stored deadlines these outcomes satisfy (same connection, hash and expected type,
 * occurred from the source's occurrence to its deadline); returns their rules' ids.
 */
export async function satisfyDeadlines(db: pg.PoolClient, outcomes: readonly Outcome[]): Promise<string[]> {
  if (outcomes.length === 0) return [];
  const { rows } = await db.query<{ rule_id: string }>(
    `DELETE FROM rule_deadlines d
      USING unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS o (connection_id, object_type, hash, occurred_at_ms)
      WHERE d.connection_id = o.connection_id AND d.source_event_id_hash = o.hash AND d.expected_object_type = o.object_type
        AND o.occurred_at_ms BETWEEN d.occurred_at_ms AND d.due_at_ms
      RETURNING d.rule_id`,
    [
      outcomes.map((o) => o.connectionId),
      outcomes.map((o) => o.businessObjectType),
      outcomes.map((o) => o.sourceEventIdHash),
      outcomes.map((o) => o.occurredAtMs),
    ],
  );
  return [...new Set(rows.map((row) => row.rule_id))];
}

/** The earliest stored deadline, or null when none is open. */
export async function earliestDeadlineMs(db: pg.Pool): Promise<number | null> {
  const { rows } = await db.query<{ due: string | null }>('SELECT min(due_at_ms) AS due FROM rule_deadlines');
  return rows[0]?.due == null ? null : Number(rows[0].due);
}

/** Deadlines due by `dueByMs`, earliest first (read without locks: takeDeadlines decides). */
export async function dueDeadlines(db: pg.Pool, dueByMs: number, limit: number): Promise<Deadline[]> {
  const { rows } = await db.query<DeadlineRow>(
    `SELECT ${DEADLINE_COLUMNS} FROM rule_deadlines WHERE due_at_ms <= $1 ORDER BY due_at_ms LIMIT $2`,
    [dueByMs, limit],
  );
  return rows.map(toDeadline);
}

/** Deletes these deadlines and returns those it deleted: one transaction takes each deadline once. */
export async function takeDeadlines(db: pg.PoolClient, deadlines: readonly Deadline[]): Promise<Deadline[]> {
  if (deadlines.length === 0) return [];
  const { rows } = await db.query<DeadlineRow>(
    `DELETE FROM rule_deadlines d USING unnest($1::text[], $2::text[]) AS t (rule_id, source_event_id)
      WHERE d.rule_id = t.rule_id AND d.source_event_id = t.source_event_id
      RETURNING ${DEADLINE_COLUMNS.split(', ')
        .map((column) => `d.${column}`)
        .join(', ')}`,
    [deadlines.map((d) => d.ruleId), deadlines.map((d) => d.sourceEventId)],
  );
  return rows.map(toDeadline);
}

/** 02 Reconciliation rule `lastEvaluatedAt`: the worker's latest evaluation of these rules. */
export async function markEvaluated(db: pg.PoolClient, ruleIds: Iterable<string>, now: Date): Promise<void> {
  const ids = [...new Set(ruleIds)].sort();
  if (ids.length === 0) return;
  await db.query(
    'UPDATE reconciliation_rules SET last_evaluated_at = GREATEST(COALESCE(last_evaluated_at, $2), $2) WHERE id = ANY($1::text[])',
    [ids, now],
  );
}
