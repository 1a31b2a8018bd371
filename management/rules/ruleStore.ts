import type { Queryable } from '../../shared/db/pool.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { AppError } from '../../shared/errors/index.js';

/** 02 Reconciliation rule, as stored. */
export interface RuleRecord {
  id: string;
  connectionId: string;
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
  enabled: boolean;
  lastEvaluatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The definition a mutation sets (02 "Mutation body fields"). */
export interface RuleDefinition {
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
  enabled: boolean;
}

/** Where a page of a connection's rules starts: after this rule, oldest first. */
export interface RuleListPosition {
  createdAt: Date;
  id: string;
}

interface RuleRow {
  id: string;
  connection_id: string;
  source_event_type: string;
  expected_object_type: string;
  max_delay_ms: number;
  enabled: boolean;
  last_evaluated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, connection_id, source_event_type, expected_object_type, max_delay_ms, enabled, last_evaluated_at, created_at, updated_at';

function toRecord(row: RuleRow): RuleRecord {
  return {
    id: row.id,
    connectionId: row.connection_id,
    sourceEventType: row.source_event_type,
    expectedObjectType: row.expected_object_type,
    maxDelayMs: row.max_delay_ms,
    enabled: row.enabled,
    lastEvaluatedAt: row.last_evaluated_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** `limit + 1` rules after `after` (oldest first), so the caller knows whether a next page exists. */
export async function listRules(db: Queryable, connectionId: string, after: RuleListPosition | null, limit: number): Promise<RuleRecord[]> {
  const { rows } = await db.query<RuleRow>(
    `SELECT ${COLUMNS} FROM reconciliation_rules
      WHERE connection_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2, $3))
      ORDER BY created_at, id LIMIT $4`,
    [connectionId, after?.createdAt ?? null, after?.id ?? '', limit + 1],
  );
  return rows.map(toRecord);
}

export async function findRule(
  db: Queryable,
  connectionId: string,
  ruleId: string,
  options: { forUpdate?: boolean } = {},
): Promise<RuleRecord | null> {
  const { rows } = await db.query<RuleRow>(
    `SELECT ${COLUMNS} FROM reconciliation_rules WHERE connection_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [connectionId, ruleId],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** How many rules the connection holds (under its row lock, so concurrent creations count each other). */
export async function countRules(db: Queryable, connectionId: string): Promise<number> {
  const { rows } = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM reconciliation_rules WHERE connection_id = $1', [
    connectionId,
  ]);
  return rows[0].count;
}

/** 02: the (sourceEventType, expectedObjectType) pair is unique within a connection. */
function pairConflict(error: unknown): never {
  if (isUniqueViolation(error, 'reconciliation_rules_pair')) throw new AppError('expected_outcome_already_exists');
  throw error;
}

export async function insertRule(
  db: Queryable,
  input: { id: string; connectionId: string; workspaceId: string; definition: RuleDefinition; now: Date },
): Promise<RuleRecord> {
  const { definition: d } = input;
  try {
    const { rows } = await db.query<RuleRow>(
      `INSERT INTO reconciliation_rules (id, connection_id, workspace_id, source_event_type, expected_object_type, max_delay_ms, enabled, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING ${COLUMNS}`,
      [input.id, input.connectionId, input.workspaceId, d.sourceEventType, d.expectedObjectType, d.maxDelayMs, d.enabled, input.now],
    );
    return toRecord(rows[0]);
  } catch (error) {
    return pairConflict(error);
  }
}

export async function updateRule(db: Queryable, ruleId: string, definition: RuleDefinition, now: Date): Promise<RuleRecord> {
  try {
    const { rows } = await db.query<RuleRow>(
      `UPDATE reconciliation_rules
          SET source_event_type = $2, expected_object_type = $3, max_delay_ms = $4, enabled = $5, updated_at = $6
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [ruleId, definition.sourceEventType, definition.expectedObjectType, definition.maxDelayMs, definition.enabled, now],
    );
    return toRecord(rows[0]);
  } catch (error) {
    return pairConflict(error);
  }
}

export async function deleteRule(db: Queryable, ruleId: string): Promise<void> {
  await db.query('DELETE FROM reconciliation_rules WHERE id = $1', [ruleId]);
}

/** Whether an incident (open or resolved) holds findings of this rule. */
export async function hasIncidentHistory(db: Queryable, ruleId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM incidents WHERE rule_id = $1 LIMIT 1', [ruleId]);
  return (rowCount ?? 0) > 0;
}

/** A connection's configuration revision moves with every rule mutation (02: reviewed revisions). */
export async function setConnectionRevision(db: Queryable, connectionId: string, revision: string): Promise<void> {
  await db.query('UPDATE connections SET revision = $2 WHERE id = $1', [connectionId, revision]);
}
