import { newId } from '../../shared/ids.js';
import type { TestContext } from './context.js';

// Incidents are written by the analyzer; reads are tested on rows inserted straight into
// PostgreSQL with the shape of migrations/postgres/1732000002000_incidents.sql.

/** The connection an incident belongs to. */
export interface IncidentTarget {
  workspaceId: string;
  integrationId: string;
  connectionId: string;
  environmentId: string;
  mode: 'sandbox' | 'live';
}

export interface IncidentInput {
  id?: string;
  createdAt: string;
  status?: 'open' | 'resolved';
  kind?: string;
  operationKey?: string;
  resolutionState?: 'active' | 'resolved_by_contract';
  resolvedAt?: string | null;
  summary?: string;
  affectedRecords?: number;
  observationIds?: string[];
  evidenceTruncated?: boolean;
}

let operationCounter = 0;

/** Inserts one incident row as the analyzer would; `createdAt` may carry microseconds. */
export async function insertIncident(ctx: TestContext, target: IncidentTarget, input: IncidentInput): Promise<string> {
  const id = input.id ?? newId('inc_');
  const status = input.status ?? 'open';
  await ctx.deps.pool.query(
    `INSERT INTO incidents (id, connection_id, workspace_id, integration_id, environment_id, mode, operation_key, kind, status,
                            resolution_state, contract_version_id, summary, affected_records, observation_ids, evidence_truncated,
                            first_observed_at, last_observed_at, created_at, updated_at, resolved_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'cv_01jx0000000000000000000000', $11, $12, $13, $14,
             '2025-02-01T00:00:00.000Z', '2025-02-02T00:00:00.000Z', $15::timestamptz, $15::timestamptz + interval '1 hour', $16)`,
    [
      id,
      target.connectionId,
      target.workspaceId,
      target.integrationId,
      target.environmentId,
      target.mode,
      input.operationKey ?? `GET /v1/orders/${++operationCounter}:response:200`,
      input.kind ?? 'schema-drift',
      status,
      input.resolutionState ?? (status === 'resolved' ? 'resolved_by_contract' : 'active'),
      input.summary ?? 'Orders drifted',
      input.affectedRecords ?? 3,
      input.observationIds ?? ['evt_1', 'evt_2', 'evt_3'],
      input.evidenceTruncated ?? false,
      input.createdAt,
      input.resolvedAt ?? (status === 'resolved' ? '2025-03-02T00:00:00.000Z' : null),
    ],
  );
  return id;
}

/** Adds one finding to an incident, as the analyzer records a distinct (kind, path). */
export async function insertFinding(
  ctx: TestContext,
  incidentId: string,
  finding: { kind: string; path: string; expected: string; observed: string; forbidden?: boolean; observationCount?: number },
): Promise<void> {
  await ctx.deps.pool.query(
    `INSERT INTO incident_findings (incident_id, kind, path, expected, observed, forbidden, observation_count, first_observed_at, last_observed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, '2025-02-01T00:00:00.000Z', '2025-02-02T00:00:00.000Z')`,
    [incidentId, finding.kind, finding.path, finding.expected, finding.observed, finding.forbidden ?? null, finding.observationCount ?? 1],
  );
}
