import type pg from 'pg';
import type { ClickHouseClient } from '@clickhouse/client';
import type { BatchRef } from '../shared/analysis/observationGroups.js';
import { correlatedObservationsOfBatches, type CorrelatedObservation } from './ruleObservations.js';
import { enabledRulesOf, insertDeadlines, markEvaluated, satisfyDeadlines, type Deadline, type EvaluatedRule } from './ruleStore.js';

/** An outcome satisfies a source when it is of the rule's type, shares its hash and occurred within its delay. */
export function satisfies(outcome: Pick<CorrelatedObservation, 'businessObjectType' | 'sourceEventIdHash' | 'occurredAtMs'>, deadline: Deadline): boolean {
  return outcome.businessObjectType === deadline.expectedObjectType && outcome.sourceEventIdHash === deadline.sourceEventIdHash
    && outcome.occurredAtMs >= deadline.occurredAtMs && outcome.occurredAtMs <= deadline.dueAtMs;
}

/**
 * Reconciliation of newly analysed batches (00-decisions §5), inside their analysis transaction
 * (the batches claimed, the connections locked): each source observation of an enabled rule
 * opens a deadline at occurredAt + maxDelayMs, unless an outcome of the same batches already
 * satisfies it; each outcome removes the stored deadlines it satisfies. Deadlines fire later,
 * by stream time (ruleFiring.ts). Observations without a correlation hash cannot be paired and
 * are left out (docs/decisions.md). Returns how many sources were evaluated.
 */
export async function evaluateRules(db: pg.PoolClient, clickhouse: ClickHouseClient, batches: readonly BatchRef[], now: Date): Promise<number> {
  const rules = await enabledRulesOf(db, [...new Set(batches.map((batch) => batch.connectionId))]);
  if (rules.size === 0) return 0;
  const sourceTypes = new Set<string>();
  const objectTypes = new Set<string>();
  for (const list of rules.values()) {
    for (const rule of list) {
      sourceTypes.add(rule.sourceEventType);
      objectTypes.add(rule.expectedObjectType);
    }
  }
  const observations = await correlatedObservationsOfBatches(clickhouse, batches.filter((batch) => rules.has(batch.connectionId)), sourceTypes, objectTypes);
  const opened: Deadline[] = [];
  const outcomes: CorrelatedObservation[] = [];
  const evaluated = new Set<string>();
  let sources = 0;
  // Outcomes of these batches by connection and hash, to pair sources analysed with them.
  const outcomesByKey = new Map<string, CorrelatedObservation[]>();
  for (const observation of observations) {
    const list = rules.get(observation.connectionId) ?? [];
    if (!list.some((rule) => rule.expectedObjectType === observation.businessObjectType)) continue;
    outcomes.push(observation);
    const key = `${observation.connectionId}\n${observation.sourceEventIdHash}`;
    const same = outcomesByKey.get(key);
    if (same === undefined) outcomesByKey.set(key, [observation]);
    else same.push(observation);
  }
  for (const observation of observations) {
    for (const rule of rules.get(observation.connectionId) ?? []) {
      if (rule.sourceEventType !== observation.eventType) continue;
      evaluated.add(rule.id);
      sources += 1;
      const deadline = deadlineOf(rule, observation);
      const paired = outcomesByKey.get(`${observation.connectionId}\n${observation.sourceEventIdHash}`) ?? [];
      if (!paired.some((outcome) => satisfies(outcome, deadline))) opened.push(deadline);
    }
  }
  // Stored deadlines first: those just opened were already paired with these outcomes above.
  for (const ruleId of await satisfyDeadlines(db, outcomes)) evaluated.add(ruleId);
  await insertDeadlines(db, opened);
  await markEvaluated(db, evaluated, now);
  return sources;
}

function deadlineOf(rule: EvaluatedRule, source: CorrelatedObservation): Deadline {
  return {
    ruleId: rule.id, sourceEventId: source.eventId, connectionId: source.connectionId, sourceEventType: rule.sourceEventType,
    expectedObjectType: rule.expectedObjectType, sourceEventIdHash: source.sourceEventIdHash,
    occurredAtMs: source.occurredAtMs, dueAtMs: source.occurredAtMs + rule.maxDelayMs,
  };
}
