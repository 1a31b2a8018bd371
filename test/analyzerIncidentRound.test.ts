import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToIncidents, type IncidentAddition } from '../analyzer/addToIncidents.js';
import { lockConnections } from '../analyzer/incidentStore.js';
import { findingKey, incidentSummary, type IncidentAggregate, type IncidentKind } from '../shared/analysis/incidentAggregate.js';
import { EVIDENCE_LIMIT } from '../shared/analysis/observationGroups.js';
import type { Finding } from '../shared/analysis/types.js';
import { withTransaction } from '../shared/db/transaction.js';
import { findingsOf, incidentsOf, type FindingRow } from './helpers/analyzer.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { insertFinding, insertIncident, type IncidentTarget } from './helpers/incidents.js';
import { createIntegration } from './helpers/integrations.js';

// analyzer/addToIncidents.ts: a round's aggregates of several connections go to their incidents
// in one statement. Each incident must end as the analyzer's incident rules say (00-decisions §5):
// counts and evidence added to the open incident of its key, a resolved one left alone and a new
// one opened, findings merged by (kind, path), the summary naming every finding the incident holds.

let ctx: TestContext;
let a: IncidentTarget;
let b: IncidentTarget;

async function createTarget(apiKey: string, workspaceId: string): Promise<IncidentTarget> {
  const created = await createIntegration(ctx, apiKey, { mode: 'sandbox' });
  return {
    workspaceId,
    integrationId: created.integration.id,
    connectionId: created.integration.connectionId,
    environmentId: created.integration.environmentId,
    mode: 'sandbox',
  };
}

beforeAll(async () => {
  ctx = await createTestContext();
  const boot = await bootstrapWorkspace(ctx);
  a = await createTarget(boot.apiKey.key, boot.workspace.id);
  b = await createTarget(boot.apiKey.key, boot.workspace.id);
});

afterAll(async () => {
  await ctx?.close();
});

const T0 = Date.parse('2025-03-01T10:00:00.000Z');

function aggregate(
  target: IncidentTarget,
  operationKey: string,
  kind: IncidentKind,
  eventIds: string[],
  findings: { finding: Finding; count: number; firstMs: number; lastMs: number }[],
): IncidentAggregate {
  return {
    connectionId: target.connectionId,
    operationKey,
    kind,
    contractVersionId: 'cv_round',
    count: eventIds.length,
    firstMs: Math.min(...findings.map((f) => f.firstMs)),
    lastMs: Math.max(...findings.map((f) => f.lastMs)),
    eventIds,
    findings: new Map(findings.map((f) => [findingKey(f.finding), f])),
  };
}

/** Runs one round as live analysis does: the connections locked, then all aggregates added. */
function round(aggregates: IncidentAggregate[]): Promise<number> {
  return withTransaction(ctx.deps.pool, async (db) => {
    const connections = await lockConnections(
      db,
      aggregates.map((agg) => agg.connectionId),
    );
    const additions: IncidentAddition[] = aggregates.map((agg) => ({ connection: connections.get(agg.connectionId)!, aggregate: agg }));
    return addToIncidents(db, additions, new Date(T0 + 60_000));
  });
}

const asFindings = (rows: FindingRow[]): Finding[] =>
  rows.map((row) => ({ kind: row.kind as Finding['kind'], path: row.path, expected: row.expected, observed: row.observed }));

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

describe('addToIncidents', () => {
  it('adds to open incidents and opens the others, across connections, in one round', async () => {
    const drift = 'GET /v1/orders/{id}:response:200';
    const unknown = 'GET /v1/refunds:response:200';
    const open = await insertIncident(ctx, a, { createdAt: '2025-02-01T00:00:00.000Z', operationKey: drift, affectedRecords: 3 });
    await insertFinding(ctx, open, {
      kind: 'undeclared_field',
      path: '/note',
      expected: 'no field',
      observed: 'string',
      observationCount: 3,
    });
    await insertFinding(ctx, open, { kind: 'type_mismatch', path: '/total', expected: 'number', observed: 'string', observationCount: 2 });
    const resolved = await insertIncident(ctx, b, { createdAt: '2025-02-01T00:00:00.000Z', operationKey: drift, status: 'resolved' });

    const typeChanged: Finding = { kind: 'type_mismatch', path: '/total', expected: 'number', observed: 'boolean' };
    const added: Finding = { kind: 'required_field_missing', path: '/id', expected: 'string', observed: 'absent' };
    const opened = await round([
      aggregate(
        a,
        drift,
        'schema-drift',
        ['evt-a1', 'evt-a2'],
        [
          { finding: typeChanged, count: 2, firstMs: T0, lastMs: T0 + 5 },
          { finding: added, count: 1, firstMs: T0 + 1, lastMs: T0 + 1 },
        ],
      ),
      aggregate(
        a,
        unknown,
        'unknown-operation',
        ['evt-a3'],
        [
          {
            finding: { kind: 'unknown_operation', path: '', expected: 'a declared operation', observed: 'GET /v1/refunds' },
            count: 1,
            firstMs: T0,
            lastMs: T0,
          },
        ],
      ),
      aggregate(b, drift, 'schema-drift', ['evt-b1'], [{ finding: added, count: 1, firstMs: T0 + 2, lastMs: T0 + 2 }]),
    ]);
    expect(opened).toBe(2);

    const [continued, refunds] = (await incidentsOf(ctx, a.connectionId)).filter((row) => row.status === 'open');
    expect(continued.id).toBe(open);
    expect(continued.affected_records).toBe('5');
    expect(continued.observation_ids).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt-a1', 'evt-a2']);
    const continuedFindings = await findingsOf(ctx, open);
    expect(continuedFindings.map((f) => [f.kind, f.path, f.observed, f.observation_count])).toEqual([
      ['required_field_missing', '/id', 'absent', '1'],
      ['undeclared_field', '/note', 'string', '3'],
      ['type_mismatch', '/total', 'boolean', '4'],
    ]);
    expect(continued.summary).toBe(incidentSummary('schema-drift', drift, asFindings(continuedFindings), 5));

    expect(refunds.operation_key).toBe(unknown);
    expect(refunds.affected_records).toBe('1');
    expect(refunds.observation_ids).toEqual(['evt-a3']);
    expect(refunds.summary).toBe(incidentSummary('unknown-operation', unknown, asFindings(await findingsOf(ctx, refunds.id)), 1));

    const [before, after] = await incidentsOf(ctx, b.connectionId);
    expect([before.id, before.status, before.summary, before.affected_records]).toEqual([resolved, 'resolved', 'Orders drifted', '3']);
    expect([after.status, after.affected_records, after.observation_ids]).toEqual(['open', '1', ['evt-b1']]);
    const openedFindings = await findingsOf(ctx, after.id);
    expect(openedFindings.map((f) => [f.kind, f.path, f.observation_count])).toEqual([['required_field_missing', '/id', '1']]);
    expect(after.summary).toBe(incidentSummary('schema-drift', drift, asFindings(openedFindings), 1));
  });

  it(`keeps the first ${EVIDENCE_LIMIT} observations as evidence and marks the rest truncated`, async () => {
    const key = 'POST /v1/orders:request:0';
    const finding: Finding = { kind: 'undeclared_field', path: '/extra', expected: 'no field', observed: 'number' };
    const near = await insertIncident(ctx, a, {
      createdAt: '2025-02-01T00:00:00.000Z',
      operationKey: key,
      affectedRecords: EVIDENCE_LIMIT - 2,
      observationIds: ids('old', EVIDENCE_LIMIT - 2),
    });
    await insertFinding(ctx, near, finding);
    await round([aggregate(a, key, 'schema-drift', ids('new', 5), [{ finding, count: 5, firstMs: T0, lastMs: T0 }])]);
    const row = (await incidentsOf(ctx, a.connectionId)).find((incident) => incident.id === near)!;
    expect(row.affected_records).toBe(String(EVIDENCE_LIMIT + 3));
    expect(row.observation_ids).toEqual([...ids('old', EVIDENCE_LIMIT - 2), 'new-0000', 'new-0001']);
    expect(row.evidence_truncated).toBe(true);
  });

  it('refuses two aggregates of one incident in a round', async () => {
    const key = 'GET /v1/twice:response:200';
    const finding: Finding = { kind: 'undeclared_field', path: '/x', expected: 'no field', observed: 'string' };
    const twice = aggregate(a, key, 'schema-drift', ['evt-t1'], [{ finding, count: 1, firstMs: T0, lastMs: T0 }]);
    await expect(round([twice, { ...twice }])).rejects.toThrow(/two aggregates of one incident/);
    expect((await incidentsOf(ctx, a.connectionId)).filter((row) => row.operation_key === key)).toEqual([]);
  });
});
