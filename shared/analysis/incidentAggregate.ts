import type { ObservationGroup, ShapeLocator } from './observationGroups.js';
import { EVIDENCE_LIMIT } from './observationGroups.js';
import type { AnalysedOperation, Finding, ObservedOperation } from './types.js';
import { observedOperationKey, transportErrorFinding, unknownOperationFinding } from './compare.js';

/** 00-decisions §5 incident kinds: three from shapes, `expected-outcome-missing` from reconciliation rules. */
export type IncidentKind = 'schema-drift' | 'unknown-operation' | 'transport-errors' | 'expected-outcome-missing';

/** A contract version ready for analysis: its id and how an observation finds its operation. */
export interface ContractForAnalysis {
  versionId: string;
  match(observed: ObservedOperation): AnalysedOperation | null;
}

/** One shape to compare with one operation of one version (the memo key is all three). */
export interface ComparisonRequest {
  versionId: string;
  operation: AnalysedOperation;
  shapeHash: string;
  /** The shape text, or null when the comparer must load it (only on a memo miss) from `locator`. */
  shape: string | null;
  locator: ShapeLocator;
}

/** Resolves each request's findings, in request order (memoised and run on workers by the analyzer). */
export type CompareMany = (requests: ComparisonRequest[]) => Promise<Finding[][]>;

export interface FindingAggregate {
  finding: Finding;
  count: number;
  firstMs: number;
  lastMs: number;
}

/** What a set of observation groups contributes to one (connection, operationKey, kind) incident. */
export interface IncidentAggregate {
  connectionId: string;
  operationKey: string;
  kind: IncidentKind;
  /** The version whose analysis produced it (null for transport errors without a contract). */
  contractVersionId: string | null;
  count: number;
  firstMs: number;
  lastMs: number;
  /** At most EVIDENCE_LIMIT eventIds, sorted. */
  eventIds: string[];
  /** Keyed by findingKey. */
  findings: Map<string, FindingAggregate>;
  /** `expected-outcome-missing` only: the rule whose deadlines passed (one open incident per rule). */
  ruleId?: string;
}

export const incidentKey = (connectionId: string, operationKey: string, kind: string): string =>
  `${connectionId}\n${operationKey}\n${kind}`;
export const findingKey = (finding: Pick<Finding, 'kind' | 'path'>): string => `${finding.kind}\n${finding.path}`;

interface Verdict {
  kind: IncidentKind;
  operationKey: string;
  findings: Finding[];
  contractVersionId: string | null;
}

/**
 * Analyses observation groups (00-decisions §5, docs/decisions/analysis.md "Incidents"):
 * - statusCode 0 is a transport error, with or without a contract;
 * - without an active contract nothing else is reported;
 * - no operation of the version matches: unknown operation;
 * - `schemaInspected: false`: no structural comparison;
 * - otherwise the shape is compared with the operation's schema; findings make schema drift.
 * Returns the incidents the groups contribute to, keyed by incidentKey.
 */
export async function aggregateIncidents(
  groups: readonly ObservationGroup[],
  contractOf: (connectionId: string) => ContractForAnalysis | null,
  compareMany: CompareMany,
): Promise<Map<string, IncidentAggregate>> {
  const verdicts: (Verdict | null)[] = new Array(groups.length).fill(null);
  const requests: ComparisonRequest[] = [];
  const requestGroups: number[] = [];
  groups.forEach((group, index) => {
    const contract = contractOf(group.connectionId);
    if (group.statusCode === 0) {
      verdicts[index] = {
        kind: 'transport-errors',
        operationKey: observedOperationKey(group),
        findings: [transportErrorFinding()],
        contractVersionId: contract?.versionId ?? null,
      };
      return;
    }
    if (contract === null) return;
    const operation = contract.match(group);
    if (operation === null) {
      verdicts[index] = {
        kind: 'unknown-operation',
        operationKey: observedOperationKey(group),
        findings: [unknownOperationFinding(group)],
        contractVersionId: contract.versionId,
      };
      return;
    }
    if (!group.schemaInspected) return;
    requests.push({ versionId: contract.versionId, operation, shapeHash: group.shapeHash, shape: group.shape, locator: group });
    requestGroups.push(index);
  });
  const results = await compareMany(requests);
  results.forEach((findings, i) => {
    if (findings.length === 0) return;
    const request = requests[i];
    verdicts[requestGroups[i]] = {
      kind: 'schema-drift',
      operationKey: request.operation.operationKey,
      findings,
      contractVersionId: request.versionId,
    };
  });

  const incidents = new Map<string, IncidentAggregate>();
  groups.forEach((group, index) => {
    const verdict = verdicts[index];
    if (verdict === null) return;
    const key = incidentKey(group.connectionId, verdict.operationKey, verdict.kind);
    let incident = incidents.get(key);
    if (incident === undefined) {
      incident = {
        connectionId: group.connectionId,
        operationKey: verdict.operationKey,
        kind: verdict.kind,
        contractVersionId: verdict.contractVersionId,
        count: 0,
        firstMs: group.firstReceivedAtMs,
        lastMs: group.lastReceivedAtMs,
        eventIds: [],
        findings: new Map(),
      };
      incidents.set(key, incident);
    }
    incident.count += group.count;
    incident.firstMs = Math.min(incident.firstMs, group.firstReceivedAtMs);
    incident.lastMs = Math.max(incident.lastMs, group.lastReceivedAtMs);
    if (incident.eventIds.length < EVIDENCE_LIMIT)
      incident.eventIds.push(...group.eventIds.slice(0, EVIDENCE_LIMIT - incident.eventIds.length));
    for (const finding of verdict.findings) {
      const fkey = findingKey(finding);
      const existing = incident.findings.get(fkey);
      if (existing === undefined) {
        incident.findings.set(fkey, { finding, count: group.count, firstMs: group.firstReceivedAtMs, lastMs: group.lastReceivedAtMs });
      } else {
        existing.count += group.count;
        existing.firstMs = Math.min(existing.firstMs, group.firstReceivedAtMs);
        if (group.lastReceivedAtMs >= existing.lastMs) existing.finding = finding;
        existing.lastMs = Math.max(existing.lastMs, group.lastReceivedAtMs);
      }
    }
  });
  for (const incident of incidents.values()) incident.eventIds.sort();
  return incidents;
}

const FINDING_WORDS: Record<Finding['kind'], string> = {
  undeclared_field: 'undeclared field',
  required_field_missing: 'required field missing',
  type_mismatch: 'type mismatch',
  unknown_operation: 'unknown operation',
  transport_error: 'transport error',
  'expected-outcome-missing': 'expected outcome missing',
};

const KIND_WORDS: Record<IncidentKind, string> = {
  'schema-drift': 'Payloads differ from the active contract',
  'unknown-operation': 'Observed an operation the active contract does not declare',
  'transport-errors': 'Outbound calls got no protocol response',
  'expected-outcome-missing': 'Expected outcomes did not follow their source events',
};

/** The incident's `summary` in plain words (03: detail is redacted; paths and kinds only). */
export function incidentSummary(kind: IncidentKind, operationKey: string, findings: Iterable<Finding>, affected: number): string {
  if (kind === 'expected-outcome-missing') {
    const rule = [...findings][0];
    return `${KIND_WORDS[kind]}${rule ? `: ${rule.expected}` : ''} (${affected} source observation${affected === 1 ? '' : 's'}).`;
  }
  const list = [...findings]
    .filter((f) => f.kind !== 'unknown_operation' && f.kind !== 'transport_error')
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.kind < b.kind ? -1 : 1));
  const shown = list
    .slice(0, 5)
    .map(
      (f) =>
        `${FINDING_WORDS[f.kind]} at ${f.path === '' ? '(root)' : f.path}`
        + (f.kind === 'type_mismatch' ? ` (expected ${f.expected}, observed ${f.observed})` : ''),
    );
  const more = list.length > shown.length ? `, and ${list.length - shown.length} more` : '';
  const detail = shown.length > 0 ? `: ${shown.join('; ')}${more}` : '';
  return `${KIND_WORDS[kind]} on ${operationKey}${detail} (${affected} observation${affected === 1 ? '' : 's'}).`;
}
