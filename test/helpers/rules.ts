import { expect } from 'vitest';
import type { RuleView } from '../../management/rules/ruleService.js';
import { RULE_CHANGE_TOPIC, type RuleChangeJob } from '../../shared/analysis/ruleChangeJob.js';
import { readConnectionRow } from './connections.js';
import { callWithKey, newIdempotencyKey, type TestContext } from './context.js';

/** 02 "Rule mutation receipt": the answer of a rule create, update or delete, and of its operation read. */
export interface RuleReceipt {
  connectionId: string;
  workspaceIntegrationId: string;
  mode: 'sandbox' | 'live';
  revision: string;
  operationId: string;
  action: 'rule.create' | 'rule.update' | 'rule.delete';
  status: 'completed';
  expectedRevision: string;
  requestFingerprint: string;
  completedAt: string;
  /** The rule after the change (a delete's: the removed rule). */
  rule: RuleView;
  replayed: boolean;
  historical: boolean;
}

/**
 * Creates a reconciliation rule through POST /v1/connections/{connectionId}/reconciliation-rules
 * with a workspace key, at the connection's current revision; returns the 201 receipt.
 */
export async function createRuleWithKey(
  ctx: TestContext,
  key: string,
  connectionId: string,
  definition: Record<string, unknown>,
  idempotencyKey: string = newIdempotencyKey(),
): Promise<RuleReceipt> {
  const { revision } = await readConnectionRow(ctx, connectionId);
  const res = await callWithKey(ctx, key, 'POST', `/v1/connections/${connectionId}/reconciliation-rules`, {
    idempotencyKey,
    body: { expectedRevision: revision, ...definition },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The analysis jobs (outbox topic `rule-change`) that rule mutations enqueued for one connection, oldest first. */
export async function ruleChangeJobs(ctx: TestContext, connectionId: string): Promise<RuleChangeJob[]> {
  const { rows } = await ctx.deps.pool.query<{ payload: RuleChangeJob }>(
    "SELECT payload FROM outbox WHERE topic = $1 AND payload->>'connectionId' = $2 ORDER BY id",
    [RULE_CHANGE_TOPIC, connectionId],
  );
  return rows.map((row) => row.payload);
}

/** A rule's `lastEvaluatedAt` as the single read (GET …/reconciliation-rules/{ruleId}) shows it. */
export async function ruleLastEvaluatedAt(ctx: TestContext, key: string, connectionId: string, ruleId: string): Promise<string | null> {
  const res = await callWithKey(ctx, key, 'GET', `/v1/connections/${connectionId}/reconciliation-rules/${ruleId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().rule.lastEvaluatedAt;
}
