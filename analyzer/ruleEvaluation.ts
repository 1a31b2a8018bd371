import type pg from 'pg';
import type { ClickHouseClient } from '@clickhouse/client';
import type { BatchRef } from '../shared/analysis/observationGroups.js';
import { correlatedObservationsOfBatches, type CorrelatedObservation } from './ruleObservations.js';
import { enabledRulesOf, insertDeadlines, markEvaluated, satisfyDeadlines, type Deadline, type EvaluatedRule } from './ruleStore.js';

/** An outcome satisfies a source when it is of the rule's type, shares its hash and occurred within its delay. */
function satisfies(outcome: CorrelatedObservation, deadline: Deadline): boolean {
  return (
    outcome.businessObjectType === deadline.expectedObjectType
    && outcome.sourceEventIdHash === deadline.sourceEventIdHash
    && outcome.occurredAtMs >= deadline.occurredAtMs
    && outcome.occurredAtMs <= deadline.dueAtMs
  );
}

/** Outcomes by connection and correlation hash, asked whether any satisfies a deadline. */
export class OutcomeIndex {
  private readonly byCorrelation = new Map<string, CorrelatedObservation[]>();

  constructor(outcomes: Iterable<CorrelatedObservation>) {
    for (const outcome of outcomes) {
      const key = correlationKey(outcome.connectionId, outcome.sourceEventIdHash);
      const list = this.byCorrelation.get(key);
      if (list === undefined) this.byCorrelation.set(key, [outcome]);
      else list.push(outcome);
    }
  }

  satisfies(deadline: Deadline): boolean {
    return (this.byCorrelation.get(correlationKey(deadline.connectionId, deadline.sourceEventIdHash)) ?? []).some((outcome) =>
      satisfies(outcome, deadline),
    );
  }
}

const correlationKey = (connectionId: string, hash: string) => `${connectionId}\n${hash}`;

/**
 * Reconciliation of newly analysed batches (00-decisions §5), inside their analysis transaction
 * (the batches claimed, the connections locked): each source observation of an enabled rule
 * opens a deadline at occurredAt + maxDelayMs, unless an outcome of the same batches already
 * satisfies it; each outcome removes the stored deadlines it satisfies. Deadlines fire later,
 * by stream time (ruleFiring.ts). Observations without a correlation hash cannot be paired and
 * are left out (docs/decisions/rules.md). Returns how many sources were evaluated.
 */
export async function evaluateRules(
  db: pg.PoolClient,
  clickhouse: ClickHouseClient,
  batches: readonly BatchRef[],
  now: Date,
): Promise<number> {
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
  const observations = await correlatedObservationsOfBatches(
    clickhouse,
    batches.filter((batch) => rules.has(batch.connectionId)),
    sourceTypes,
    objectTypes,
  );
  const opened: Deadline[] = [];
  const evaluated = new Set<string>();
  let sources = 0;
  const outcomes = observations.filter((observation) =>
    (rules.get(observation.connectionId) ?? []).some((rule) => rule.expectedObjectType === observation.businessObjectType),
  );
  // Outcomes of these batches, to pair the sources analysed with them.
  const paired = new OutcomeIndex(outcomes);
  for (const observation of observations) {
    for (const rule of rules.get(observation.connectionId) ?? []) {
      if (rule.sourceEventType !== observation.eventType) continue;
      evaluated.add(rule.id);
      sources += 1;
      const deadline = deadlineOf(rule, observation);
      if (!paired.satisfies(deadline)) opened.push(deadline);
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
    ruleId: rule.id,
    sourceEventId: source.eventId,
    connectionId: source.connectionId,
    sourceEventType: rule.sourceEventType,
    expectedObjectType: rule.expectedObjectType,
    sourceEventIdHash: source.sourceEventIdHash,
    occurredAtMs: source.occurredAtMs,
    dueAtMs: source.occurredAtMs + rule.maxDelayMs,
  };
}
