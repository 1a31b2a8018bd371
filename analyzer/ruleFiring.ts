import type pg from 'pg';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Clock } from '../shared/clock.js';
import { withTransaction } from '../shared/db/transaction.js';
import { EVIDENCE_LIMIT } from '../shared/analysis/observationGroups.js';
import { findingKey, type IncidentAggregate } from '../shared/analysis/incidentAggregate.js';
import type { Finding } from '../shared/analysis/types.js';
import { addToIncidents, type IncidentAddition } from './addToIncidents.js';
import { lockConnections, refreshConnectionStates } from './incidentStore.js';
import { OutcomeIndex } from './ruleEvaluation.js';
import { storedOutcomes } from './ruleObservations.js';
import {
  currentRules,
  dueDeadlines,
  earliestDeadlineMs,
  markEvaluated,
  takeDeadlines,
  type Deadline,
  type EvaluatedRule,
} from './ruleStore.js';
import type { StreamTime } from './streamTime.js';

/** Deadlines fired per transaction. */
export const FIRE_BATCH = 1000;
/** An outcome may carry a receipt time this much before its source's occurrence (collector clocks). */
const CLOCK_SKEW_MS = 3_600_000;

export interface RuleFiringDeps {
  pool: pg.Pool;
  clickhouse: ClickHouseClient;
  clock: Clock;
  streamTime: StreamTime;
  graceMs: number;
}

export interface FiringRound {
  /** Deadlines taken (fired or found satisfied). */
  taken: number;
  /** Of those, the ones that produced a finding. */
  fired: number;
  /** Incidents opened by those findings. */
  opened: number;
  /** How far stream time was behind the service clock, when deadlines were due. */
  streamLagMs?: number;
}

/** `expected-outcome-missing` incidents are one per (connection, rule): the rule's id is their key. */
export const ruleIncidentKey = (ruleId: string): string => `rule:${ruleId}`;

function missingFinding(rule: EvaluatedRule): Finding {
  return {
    kind: 'expected-outcome-missing',
    path: '',
    expected: `${rule.expectedObjectType} within ${rule.maxDelayMs} ms of ${rule.sourceEventType}`,
    observed: "no observation of that object type with the source's correlation hash",
  };
}

/**
 * Fires the deadlines that stream time has passed (00-decisions §5 "Reconciliation"): each
 * becomes an `expected-outcome-missing` finding on its rule's open incident, unless an outcome
 * stored before it (analysed before its source) satisfies it, or its rule was since disabled,
 * deleted or given another pair. Deleting a deadline and recording its finding commit together,
 * under the connection's lock, so no restart or second analyzer fires one twice or loses one.
 */
export async function fireDueDeadlines(deps: RuleFiringDeps): Promise<FiringRound> {
  const earliest = await earliestDeadlineMs(deps.pool);
  if (earliest === null || earliest > deps.clock.nowMs() - deps.graceMs) return { taken: 0, fired: 0, opened: 0 };
  const streamNowMs = await deps.streamTime.nowMs();
  const streamLagMs = Math.max(0, deps.clock.nowMs() - streamNowMs);
  const candidates = await dueDeadlines(deps.pool, streamNowMs, FIRE_BATCH);
  if (candidates.length === 0) return { taken: 0, fired: 0, opened: 0, streamLagMs };
  const outcomes = await outcomesOf(deps.clickhouse, candidates);
  const now = deps.clock.now();
  let result: FiringRound = { taken: 0, fired: 0, opened: 0, streamLagMs };
  await withTransaction(deps.pool, async (db) => {
    const connections = await lockConnections(
      db,
      candidates.map((d) => d.connectionId),
    );
    const taken = await takeDeadlines(db, candidates);
    const rules = await currentRules(
      db,
      taken.map((d) => d.ruleId),
    );
    const missing = new Map<string, Deadline[]>();
    for (const deadline of taken) {
      const rule = rules.get(deadline.ruleId);
      if (!rule?.enabled || rule.sourceEventType !== deadline.sourceEventType || rule.expectedObjectType !== deadline.expectedObjectType)
        continue;
      if (outcomes.satisfies(deadline)) continue;
      const list = missing.get(deadline.ruleId);
      if (list === undefined) missing.set(deadline.ruleId, [deadline]);
      else list.push(deadline);
    }
    const additions: IncidentAddition[] = [];
    for (const [ruleId, deadlines] of missing) {
      const rule = rules.get(ruleId)!;
      const connection = connections.get(rule.connectionId);
      if (connection === undefined) continue;
      additions.push({ connection, aggregate: aggregateOf(rule, deadlines, connection.activeContractVersionId) });
    }
    const opened = await addToIncidents(db, additions, now);
    await refreshConnectionStates(
      db,
      [...new Set(additions.map(({ connection }) => connection.id))].map((connectionId) => ({ connectionId, latestObservationMs: null })),
    );
    await markEvaluated(db, [...rules.keys()], now);
    result = { taken: taken.length, fired: [...missing.values()].reduce((sum, list) => sum + list.length, 0), opened, streamLagMs };
  });
  return result;
}

/** Outcomes stored for the candidates. */
async function outcomesOf(clickhouse: ClickHouseClient, candidates: readonly Deadline[]): Promise<OutcomeIndex> {
  const queries = new Map<string, { connectionId: string; hashes: Set<string>; objectTypes: Set<string>; receivedFromMs: number }>();
  for (const d of candidates) {
    const query = queries.get(d.connectionId);
    if (query === undefined) {
      queries.set(d.connectionId, {
        connectionId: d.connectionId,
        hashes: new Set([d.sourceEventIdHash]),
        objectTypes: new Set([d.expectedObjectType]),
        receivedFromMs: d.occurredAtMs - CLOCK_SKEW_MS,
      });
    } else {
      query.hashes.add(d.sourceEventIdHash);
      query.objectTypes.add(d.expectedObjectType);
      query.receivedFromMs = Math.min(query.receivedFromMs, d.occurredAtMs - CLOCK_SKEW_MS);
    }
  }
  return new OutcomeIndex(await storedOutcomes(clickhouse, [...queries.values()]));
}

function aggregateOf(rule: EvaluatedRule, deadlines: readonly Deadline[], contractVersionId: string | null): IncidentAggregate {
  const finding = missingFinding(rule);
  const occurred = deadlines.map((d) => d.occurredAtMs);
  const firstMs = Math.min(...occurred);
  const lastMs = Math.max(...occurred);
  return {
    connectionId: rule.connectionId,
    operationKey: ruleIncidentKey(rule.id),
    kind: 'expected-outcome-missing',
    contractVersionId,
    count: deadlines.length,
    firstMs,
    lastMs,
    eventIds: deadlines
      .map((d) => d.sourceEventId)
      .sort()
      .slice(0, EVIDENCE_LIMIT),
    findings: new Map([[findingKey(finding), { finding, count: deadlines.length, firstMs, lastMs }]]),
    ruleId: rule.id,
  };
}
