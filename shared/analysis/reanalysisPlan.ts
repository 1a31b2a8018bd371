import type { ClickHouseClient } from '@clickhouse/client';
import { aggregateIncidents, incidentKey, type CompareMany, type ContractForAnalysis, type IncidentAggregate, type IncidentKind } from './incidentAggregate.js';
import { groupsOfWindow } from './observationGroups.js';

/** The incident kinds that shapes produce, and so the ones reanalysis may resolve (rules' incidents are not). */
export const SHAPE_INCIDENT_KINDS: readonly IncidentKind[] = ['schema-drift', 'unknown-operation', 'transport-errors'];

/**
 * How far back reanalysis (and, by default, the activation dry-run) reads a connection's stored
 * observations: the same window for both, so the dry-run predicts what activation does.
 */
export const REANALYSIS_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** An open incident as reanalysis sees it. */
export interface OpenIncidentRef {
  id: string;
  operationKey: string;
  kind: string;
  affectedRecords: number;
}

export interface ReanalysisPlan {
  /** Open incidents the version no longer produces: resolved with `resolved_by_contract`. */
  resolved: OpenIncidentRef[];
  /** Open incidents the version still produces, with their recounted evidence. */
  continued: { incident: OpenIncidentRef; aggregate: IncidentAggregate }[];
  /** Incidents the version produces that are not open: opened. */
  opened: IncidentAggregate[];
  /** The latest receipt time among the observations read (null when none). */
  lastReceivedAtMs: number | null;
}

/**
 * Analyses a connection's observations received in [fromMs, toMs) under a contract version
 * (one comparison per distinct shape; counts and evidence from ClickHouse) and decides what
 * happens to its open incidents. Both the analyzer's reanalysis and the dry-run call it.
 */
export async function planReanalysis(
  clickhouse: ClickHouseClient,
  connectionId: string,
  contract: ContractForAnalysis | null,
  window: { fromMs: number; toMs: number },
  openIncidents: readonly OpenIncidentRef[],
  compareMany: CompareMany,
): Promise<ReanalysisPlan> {
  const groups = await groupsOfWindow(clickhouse, connectionId, window.fromMs, window.toMs);
  const aggregates = await aggregateIncidents(groups, () => contract, compareMany);
  const lastReceivedAtMs = groups.length === 0 ? null : Math.max(...groups.map((group) => group.lastReceivedAtMs));
  const plan: ReanalysisPlan = { resolved: [], continued: [], opened: [], lastReceivedAtMs };
  const open = new Set<string>();
  for (const incident of openIncidents) {
    if (!(SHAPE_INCIDENT_KINDS as readonly string[]).includes(incident.kind)) continue;
    const key = incidentKey(connectionId, incident.operationKey, incident.kind);
    open.add(key);
    const aggregate = aggregates.get(key);
    if (aggregate === undefined) plan.resolved.push(incident);
    else plan.continued.push({ incident, aggregate });
  }
  for (const [key, aggregate] of aggregates) if (!open.has(key)) plan.opened.push(aggregate);
  plan.opened.sort((a, b) => (a.operationKey < b.operationKey ? -1 : a.operationKey > b.operationKey ? 1 : a.kind < b.kind ? -1 : 1));
  return plan;
}
