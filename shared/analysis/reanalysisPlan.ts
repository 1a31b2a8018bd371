import type { ClickHouseClient } from '@clickhouse/client';
import type { Queryable } from '../db/pool.js';
import {
  aggregateIncidents,
  incidentKey,
  type CompareMany,
  type ContractForAnalysis,
  type IncidentAggregate,
  type IncidentKind,
} from './incidentAggregate.js';
import { groupsOfWindow } from './observationGroups.js';

/** The incident kinds that shapes produce, and so the ones reanalysis may resolve (rules' incidents are not). */
export const SHAPE_INCIDENT_KINDS: readonly IncidentKind[] = ['schema-drift', 'unknown-operation', 'transport-errors'];

/**
 * How far back reanalysis (and, by default, the activation dry-run) reads a connection's stored
 * observations: the same window for both, so the dry-run predicts what activation does.
 */
export const REANALYSIS_WINDOW_MS = 30 * 24 * 3600 * 1000;

/**
 * The receipt-time window [fromMs, toMs) of a reanalysis, a dry-run or a coverage read: the
 * bounds given, else the last REANALYSIS_WINDOW_MS up to and including `nowMs`.
 */
export function analysisWindow(
  nowMs: number,
  range: { fromMs: number | null; toMs: number | null } = { fromMs: null, toMs: null },
): { fromMs: number; toMs: number } {
  const toMs = range.toMs ?? nowMs + 1;
  return { fromMs: range.fromMs ?? toMs - 1 - REANALYSIS_WINDOW_MS, toMs };
}

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

/** The connection's open incidents; `lock` takes their rows FOR UPDATE (inside a transaction). */
export async function openIncidentsOf(db: Queryable, connectionId: string, options: { lock: boolean }): Promise<OpenIncidentRef[]> {
  const { rows } = await db.query<{ id: string; operation_key: string; kind: string; affected_records: string }>(
    `SELECT id, operation_key, kind, affected_records FROM incidents WHERE connection_id = $1 AND status = 'open' ORDER BY id${options.lock ? ' FOR UPDATE' : ''}`,
    [connectionId],
  );
  return rows.map((row) => ({
    id: row.id,
    operationKey: row.operation_key,
    kind: row.kind,
    affectedRecords: Number(row.affected_records),
  }));
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
