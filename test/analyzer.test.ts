import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import { sqlLiteral } from '../shared/clickhouse/escape.js';
import { analysisJobFields } from '../shared/redis.js';
import { insertApiKey } from '../management/apiKeys/apiKeyStore.js';
import { bootstrapWorkspace, callWithKey, type TestContext } from './helpers/context.js';
import { activateOk, contractUrl, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createCollector, envelope, sendEnvelopes, type Collector, type Edge } from './helpers/ingest.js';
import { findingsOf, incidentsOf, reanalysed } from './helpers/analyzer.js';
import { startAnalysisFixture, type AnalysisFixture } from './helpers/edgeFixture.js';
import { waitFor } from './helpers/wait.js';
import { incidentSummary } from '../shared/analysis/incidentAggregate.js';
import type { Finding } from '../shared/analysis/types.js';

// End to end: signed envelopes posted to the running edge, analysed by the analyzer (Piscina
// worker threads), incidents read from PostgreSQL. Each shape case gets a connection of its
// own, so its incidents are exactly that case's findings.

const body = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema } } });

/** OpenAPI 3.0: nullable as `nullable: true`; closed Order, open Customer, recursive Node. */
function ordersContract(openapi: '3.0.3' | '3.1.0', extraOrderFields: Record<string, unknown> = {}): Record<string, unknown> {
  const nullableString = openapi === '3.0.3' ? { type: 'string', nullable: true } : { type: ['string', 'null'] };
  return {
    openapi,
    info: { title: 'Orders', version: '1' },
    paths: {
      '/v1/orders/{orderId}': {
        get: {
          responses: {
            '200': body({ $ref: '#/components/schemas/Order' }),
            '404': body({ type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } }),
            '4XX': body({ $ref: '#/components/schemas/Error' }),
            default: body({ type: 'object', properties: { title: { type: 'string' } } }),
          },
        },
      },
      '/v1/orders': {
        post: {
          requestBody: {
            content: { 'application/json': { schema: { type: 'object', required: ['total'], properties: { total: { type: 'number' } } } } },
          },
          responses: { '201': body({ $ref: '#/components/schemas/Order' }) },
        },
      },
      '/v1/nodes': { get: { responses: { '200': body({ $ref: '#/components/schemas/Node' }) } } },
    },
    components: {
      schemas: {
        Order: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'total', 'status'],
          properties: {
            id: { type: 'string' },
            total: { type: 'number' },
            count: { type: 'integer' },
            status: { enum: ['open', 'closed'] },
            note: nullableString,
            customer: { $ref: '#/components/schemas/Customer' },
            lines: {
              type: 'array',
              items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
            },
            ...extraOrderFields,
          },
        },
        Customer: {
          type: 'object',
          required: ['email'],
          properties: {
            email: { type: 'string' },
            address: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, zip: { type: 'string' } } },
          },
        },
        Error: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } },
        Node: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
        },
      },
    },
  };
}

type Shape = Record<string, unknown>;
const s = (kind: string): Shape => ({ kind });
const obj = (fields: Record<string, Shape>): Shape => ({ kind: 'object', fields });
const arr = (items?: Shape): Shape => (items === undefined ? { kind: 'array' } : { kind: 'array', items });
/** A shape that conforms to Order. */
const order = (fields: Record<string, Shape> = {}, drop: string[] = []): Shape => {
  const all: Record<string, Shape> = { id: s('string'), total: s('number'), status: s('string'), ...fields };
  for (const name of drop) delete all[name];
  return obj(all);
};

const GET_ORDER = { method: 'GET', routeTemplate: '/v1/orders/{orderId}', payloadLocation: 'response', statusCode: 200 };

interface ExpectedIncident {
  kind: string;
  operationKey: string;
  findings: { kind: string; path: string; expected: string; observed: string; forbidden?: boolean }[];
}

interface ShapeCase {
  name: string;
  shape: Shape;
  transport?: Partial<typeof GET_ORDER>;
  /** `false` sends envelope 0.3 with `schemaInspected: false`. */
  inspected?: boolean;
  contract?: '3.0.3' | '3.1.0' | 'none';
  expected: ExpectedIncident[];
}

const ORDER_200 = 'GET /v1/orders/{orderId}:response:200';
const drift = (findings: ExpectedIncident['findings'], operationKey = ORDER_200): ExpectedIncident[] => [
  { kind: 'schema-drift', operationKey, findings },
];

const CASES: ShapeCase[] = [
  { name: 'conforming closed object', shape: order(), expected: [] },
  {
    name: 'undeclared field on a closed object',
    shape: order({ extra: s('string') }),
    expected: drift([{ kind: 'undeclared_field', path: '/extra', expected: 'forbidden', observed: 'string', forbidden: true }]),
  },
  {
    name: 'undeclared field on an open nested object',
    shape: order({ customer: obj({ email: s('string'), phone: s('string') }) }),
    expected: drift([{ kind: 'undeclared_field', path: '/customer/phone', expected: 'undeclared', observed: 'string', forbidden: false }]),
  },
  {
    name: 'required field missing at the root',
    shape: order({}, ['total']),
    expected: drift([{ kind: 'required_field_missing', path: '/total', expected: 'number', observed: 'absent' }]),
  },
  {
    name: 'required field missing at depth through $ref',
    shape: order({ customer: obj({ email: s('string'), address: obj({ zip: s('string') }) }) }),
    expected: drift([{ kind: 'required_field_missing', path: '/customer/address/city', expected: 'string', observed: 'absent' }]),
  },
  {
    name: 'string where number',
    shape: order({ total: s('string') }),
    expected: drift([{ kind: 'type_mismatch', path: '/total', expected: 'number', observed: 'string' }]),
  },
  { name: 'integer fits number', shape: order({ total: s('integer') }), expected: [] },
  {
    name: 'number does not fit integer',
    shape: order({ count: s('number') }),
    expected: drift([{ kind: 'type_mismatch', path: '/count', expected: 'integer', observed: 'number' }]),
  },
  { name: 'null fits OpenAPI 3.0 nullable', shape: order({ note: s('null') }), expected: [] },
  {
    name: 'null does not fit a non-nullable string',
    shape: order({ id: s('null') }),
    expected: drift([{ kind: 'type_mismatch', path: '/id', expected: 'string', observed: 'null' }]),
  },
  { name: 'null fits OpenAPI 3.1 type list', contract: '3.1.0', shape: order({ note: s('null') }), expected: [] },
  {
    name: 'boolean against a 3.1 nullable string',
    contract: '3.1.0',
    shape: order({ note: s('boolean') }),
    expected: drift([{ kind: 'type_mismatch', path: '/note', expected: 'string|null', observed: 'boolean' }]),
  },
  {
    name: 'enum of strings observed as integer',
    shape: order({ status: s('integer') }),
    expected: drift([{ kind: 'type_mismatch', path: '/status', expected: 'string', observed: 'integer' }]),
  },
  {
    name: 'object mismatch hides its fields',
    shape: order({ customer: s('string') }),
    expected: drift([{ kind: 'type_mismatch', path: '/customer', expected: 'object', observed: 'string' }]),
  },
  {
    name: 'arrays of objects: one finding for all items',
    shape: order({ lines: arr(obj({ sku: s('integer') })) }),
    expected: drift([{ kind: 'type_mismatch', path: '/lines/-/sku', expected: 'string', observed: 'integer' }]),
  },
  {
    name: 'missing required inside array items',
    shape: order({ lines: arr(obj({ qty: s('integer') })) }),
    expected: drift([{ kind: 'required_field_missing', path: '/lines/-/sku', expected: 'string', observed: 'absent' }]),
  },
  { name: 'empty array', shape: order({ lines: arr() }), expected: [] },
  {
    name: 'root type mismatch',
    shape: arr(s('string')),
    expected: drift([{ kind: 'type_mismatch', path: '', expected: 'object', observed: 'array' }]),
  },
  {
    name: 'escaped field names',
    shape: order({ 'a/b': s('string'), 'm~n': s('null') }),
    expected: drift([
      { kind: 'undeclared_field', path: '/a~1b', expected: 'forbidden', observed: 'string', forbidden: true },
      { kind: 'undeclared_field', path: '/m~0n', expected: 'forbidden', observed: 'null', forbidden: true },
    ]),
  },
  {
    name: 'several findings together',
    shape: order({ total: s('boolean'), extra: s('integer') }, ['id']),
    expected: drift([
      { kind: 'undeclared_field', path: '/extra', expected: 'forbidden', observed: 'integer', forbidden: true },
      { kind: 'required_field_missing', path: '/id', expected: 'string', observed: 'absent' },
      { kind: 'type_mismatch', path: '/total', expected: 'number', observed: 'boolean' },
    ]),
  },
  {
    name: 'recursive schema, conforming at depth',
    transport: { routeTemplate: '/v1/nodes' },
    shape: obj({ name: s('string'), children: arr(obj({ name: s('string'), children: arr(obj({ name: s('string') })) })) }),
    expected: [],
  },
  {
    name: 'recursive schema, mismatch at depth',
    transport: { routeTemplate: '/v1/nodes' },
    shape: obj({ name: s('string'), children: arr(obj({ name: s('string'), children: arr(obj({ name: s('integer') })) })) }),
    expected: drift(
      [{ kind: 'type_mismatch', path: '/children/-/children/-/name', expected: 'string', observed: 'integer' }],
      'GET /v1/nodes:response:200',
    ),
  },
  { name: 'status matched exactly (404 beats 4XX)', transport: { statusCode: 404 }, shape: obj({ reason: s('string') }), expected: [] },
  {
    name: 'status matched by range (409 → 4XX)',
    transport: { statusCode: 409 },
    shape: obj({ message: s('string') }),
    expected: drift(
      [
        { kind: 'undeclared_field', path: '/message', expected: 'undeclared', observed: 'string', forbidden: false },
        { kind: 'required_field_missing', path: '/code', expected: 'string', observed: 'absent' },
      ],
      'GET /v1/orders/{orderId}:response:4XX',
    ),
  },
  {
    name: 'status matched by default (503)',
    transport: { statusCode: 503 },
    shape: obj({ title: s('integer') }),
    expected: drift(
      [{ kind: 'type_mismatch', path: '/title', expected: 'string', observed: 'integer' }],
      'GET /v1/orders/{orderId}:response:default',
    ),
  },
  {
    name: 'request payload of an open object',
    transport: { method: 'POST', routeTemplate: '/v1/orders', payloadLocation: 'request', statusCode: 201 },
    shape: obj({ total: s('number'), coupon: s('string') }),
    expected: drift(
      [{ kind: 'undeclared_field', path: '/coupon', expected: 'undeclared', observed: 'string', forbidden: false }],
      'POST /v1/orders:request:default',
    ),
  },
  {
    name: 'unknown route',
    transport: { routeTemplate: '/v1/unknown' },
    shape: obj({}),
    expected: [
      {
        kind: 'unknown-operation',
        operationKey: 'GET /v1/unknown:response:200',
        findings: [{ kind: 'unknown_operation', path: '', expected: 'a contract operation', observed: 'GET /v1/unknown:response:200' }],
      },
    ],
  },
  {
    name: 'unknown method on a known route',
    transport: { method: 'DELETE' },
    shape: obj({}),
    expected: [
      {
        kind: 'unknown-operation',
        operationKey: 'DELETE /v1/orders/{orderId}:response:200',
        findings: [
          { kind: 'unknown_operation', path: '', expected: 'a contract operation', observed: 'DELETE /v1/orders/{orderId}:response:200' },
        ],
      },
    ],
  },
  {
    name: 'statusCode 0 is a transport error',
    transport: { statusCode: 0 },
    shape: obj({}),
    expected: [
      {
        kind: 'transport-errors',
        operationKey: 'GET /v1/orders/{orderId}:response:0',
        findings: [{ kind: 'transport_error', path: '', expected: 'a protocol response', observed: 'statusCode 0' }],
      },
    ],
  },
  { name: 'schemaInspected false skips comparison', inspected: false, shape: order({ extra: s('string') }, ['id']), expected: [] },
  { name: 'no active contract: no drift', contract: 'none', shape: order({ extra: s('string') }), expected: [] },
  {
    name: 'no active contract: transport errors still found',
    contract: 'none',
    transport: { statusCode: 0 },
    shape: obj({}),
    expected: [
      {
        kind: 'transport-errors',
        operationKey: 'GET /v1/orders/{orderId}:response:0',
        findings: [{ kind: 'transport_error', path: '', expected: 'a protocol response', observed: 'statusCode 0' }],
      },
    ],
  },
];

function caseEnvelope(collector: Collector, c: Pick<ShapeCase, 'shape' | 'transport' | 'inspected'>): Record<string, unknown> {
  const base = envelope(collector);
  const payload = { ...(base.payload as Record<string, unknown>), schemaShape: c.shape };
  return {
    ...base,
    ...(c.inspected === false ? { envelopeVersion: '0.3', payload: { ...payload, schemaInspected: false } } : { payload }),
    transport: { ...(base.transport as Record<string, unknown>), ...GET_ORDER, ...c.transport },
  };
}

describe('analyzer', () => {
  let fixture: AnalysisFixture;
  let ctx: TestContext;
  let clickhouse: ClickHouseClient;
  let edge: Edge;
  let apiKey: string;
  let stream: string;

  beforeAll(async () => {
    fixture = await startAnalysisFixture({
      edge: {
        limits: { sandboxAccountEnvelopesPerMin: 100_000, sandboxAccountRequestsPerMin: 100_000, sandboxMonthlyAllowance: 1_000_000 },
      },
      // Batch markers older than the retention, and one within it, for the analyzer's start to find.
      beforeAnalyzer: async (context, analysisStream) => {
        const day = 24 * 3600 * 1000;
        await context.deps.pool.query('INSERT INTO analysed_batches (batch_id, analysed_at) VALUES ($1, $2), ($3, $4)', [
          `${analysisStream}:old`,
          new Date(Date.now() - 2 * day),
          `${analysisStream}:recent`,
          new Date(Date.now() - day / 2),
        ]);
      },
      analyzer: { batchMarkerRetentionSeconds: 24 * 3600 },
    });
    ({ ctx, clickhouse, edge, apiKey, stream } = fixture);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  async function collectorWith(contract: '3.0.3' | '3.1.0' | 'none'): Promise<{ collector: Collector; versionId: string | null }> {
    const collector = await createCollector(ctx, apiKey, { mode: 'sandbox' });
    if (contract === 'none') return { collector, versionId: null };
    const draft = await registerDraft(ctx, apiKey, collector.connectionId, openApiRegistration('v1', ordersContract(contract)));
    await activateOk(ctx, apiKey, collector.connectionId, draft.contract.id, { expectedActiveContractVersionId: null, reason: 'promote' });
    return { collector, versionId: draft.contract.id };
  }

  async function incidentView(connectionId: string) {
    const incidents = await incidentsOf(ctx, connectionId);
    return Promise.all(
      incidents.map(async (incident) => ({
        kind: incident.kind,
        operationKey: incident.operation_key,
        findings: (await findingsOf(ctx, incident.id)).map((f) => ({
          kind: f.kind,
          path: f.path,
          expected: f.expected,
          observed: f.observed,
          ...(f.forbidden === null ? {} : { forbidden: f.forbidden }),
        })),
      })),
    );
  }

  it(`finds exactly the expected findings for ${CASES.length} shape cases`, async () => {
    const collectors = await Promise.all(CASES.map((c) => collectorWith(c.contract ?? '3.0.3')));
    for (const [i, c] of CASES.entries()) {
      const answer = await sendEnvelopes(edge, collectors[i].collector, [caseEnvelope(collectors[i].collector, c)]);
      expect(answer.status, c.name).toBe(202);
    }
    await fixture.analysed();
    for (const [i, c] of CASES.entries()) {
      const expected = c.expected.map((incident) => ({
        ...incident,
        findings: [...incident.findings].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.kind < b.kind ? -1 : 1)),
      }));
      expect(await incidentView(collectors[i].collector.connectionId), c.name).toEqual(expected);
    }
  });

  async function impactOf(connectionId: string, versionId: string) {
    const res = await callWithKey(ctx, apiKey, 'GET', `${contractUrl(connectionId, versionId)}/impact`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  async function slotState(connectionId: string) {
    const res = await callWithKey(ctx, apiKey, 'GET', `/v1/connections/${connectionId}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    return { observationState: body.observationState, openIncidentCount: body.openIncidentCount };
  }

  /** The stored batches of a connection, as the analysis jobs the edge enqueued for them. */
  async function jobsOf(collector: Collector): Promise<string[][]> {
    const result = await clickhouse.query({
      query: `SELECT batch_id, any(received_at_ms) AS received, groupArray(event_id) AS ids FROM observations
               WHERE connection_id = ${sqlLiteral(collector.connectionId)} GROUP BY batch_id`,
      format: 'JSONEachRow',
    });
    const rows = await result.json<{ batch_id: string; received: string; ids: string[] }>();
    return rows.map((row) =>
      analysisJobFields({
        connectionId: collector.connectionId,
        workspaceId: 'w',
        mode: collector.mode,
        batchId: row.batch_id,
        receivedAtMs: Number(row.received),
        eventIds: row.ids,
      }),
    );
  }

  it('shows as observed the traffic that the reanalysis of an activation counted before live analysis took it', async () => {
    // A paused analyzer (no read loop) still runs reanalysis: the activation's reanalysis counts the
    // stored rows and claims their batches before their jobs are read.
    await fixture.restartAnalyzer({ concurrency: 0 });
    try {
      const { collector } = await collectorWith('none');
      expect((await sendEnvelopes(edge, collector, [caseEnvelope(collector, { shape: order() })])).status).toBe(202);
      expect(await edge.shipped()).toBe(true);
      const draft = await registerDraft(ctx, apiKey, collector.connectionId, openApiRegistration('v1', ordersContract('3.0.3')));
      await activateOk(ctx, apiKey, collector.connectionId, draft.contract.id, {
        expectedActiveContractVersionId: null,
        reason: 'promote',
      });
      await reanalysed(ctx, collector.connectionId);
      expect(await slotState(collector.connectionId)).toEqual({ observationState: 'observed', openIncidentCount: 0 });
    } finally {
      await fixture.restartAnalyzer();
      await fixture.analysed();
    }
  });

  it('counts distinct observations once, through redelivery and claims; activation resolves, rollback reopens, as the dry-run predicts', async () => {
    const { collector, versionId } = await collectorWith('3.0.3');
    const v1 = versionId!;
    expect(await slotState(collector.connectionId)).toEqual({ observationState: 'waiting_for_observation', openIncidentCount: 0 });
    const drifted = () => caseEnvelope(collector, { shape: order({ extra: s('string') }) });
    expect((await sendEnvelopes(edge, collector, [drifted(), drifted()])).status).toBe(202);
    expect((await sendEnvelopes(edge, collector, [drifted(), drifted(), drifted()])).status).toBe(202);
    await fixture.analysed();
    let [incident] = await incidentsOf(ctx, collector.connectionId);
    expect({
      kind: incident.kind,
      status: incident.status,
      affected: incident.affected_records,
      ids: incident.observation_ids.length,
    }).toEqual({ kind: 'schema-drift', status: 'open', affected: '5', ids: 5 });
    expect(await slotState(collector.connectionId)).toEqual({ observationState: 'incident_open', openIncidentCount: 1 });

    // Redelivery: the same jobs again, one of them read by a consumer that dies without
    // acknowledging (the analyzer claims it after ANALYZER_CLAIM_IDLE_MS).
    const jobs = await jobsOf(collector);
    expect(jobs).toHaveLength(2);
    for (const job of jobs) await ctx.deps.redis.xadd(stream, '*', ...job);
    await ctx.deps.redis.xreadgroup('GROUP', 'analyzers', 'dead-consumer', 'COUNT', 1, 'STREAMS', stream, '>');
    await fixture.analysed();
    [incident] = await incidentsOf(ctx, collector.connectionId);
    expect(incident.affected_records).toBe('5');
    expect((await findingsOf(ctx, incident.id)).map((f) => f.observation_count)).toEqual(['5']);

    // A version that declares the field: the dry-run says the incident resolves, activation does it.
    const v2 = (
      await registerDraft(
        ctx,
        apiKey,
        collector.connectionId,
        openApiRegistration('v2', ordersContract('3.0.3', { extra: { type: 'string' } })),
      )
    ).contract.id;
    const promote = await impactOf(collector.connectionId, v2);
    expect(promote.resolves).toEqual([{ incidentId: incident.id, kind: 'schema-drift', operationKey: ORDER_200, affectedRecords: 5 }]);
    expect(promote.opens).toEqual([]);
    expect(promote.continues).toEqual([]);
    const activation = await activateOk(ctx, apiKey, collector.connectionId, v2, {
      expectedActiveContractVersionId: v1,
      reason: 'promote',
    });
    const resolved = await waitFor(
      async () => {
        const [row] = await incidentsOf(ctx, collector.connectionId);
        return row.status === 'resolved' ? row : undefined;
      },
      15_000,
      'the incident to resolve',
    );
    expect(resolved.resolution_state).toBe('resolved_by_contract');
    const {
      rows: [connectionRow],
    } = await ctx.deps.pool.query('SELECT reanalysed_revision FROM connections WHERE id = $1', [collector.connectionId]);
    expect(connectionRow.reanalysed_revision).toBe(activation.revision);
    expect(await slotState(collector.connectionId)).toEqual({ observationState: 'observed', openIncidentCount: 0 });

    // Rollback to the first version: drift is found again in the stored traffic, as a new incident.
    const rollback = await impactOf(collector.connectionId, v1);
    expect(rollback.resolves).toEqual([]);
    expect(rollback.opens).toEqual([
      {
        kind: 'schema-drift',
        operationKey: ORDER_200,
        affectedRecords: 5,
        findings: [
          { kind: 'undeclared_field', path: '/extra', expected: 'forbidden', observed: 'string', forbidden: true, observationCount: 5 },
        ],
      },
    ]);
    await activateOk(ctx, apiKey, collector.connectionId, v1, { expectedActiveContractVersionId: v2, reason: 'rollback' });
    const reopened = await waitFor(
      async () => {
        const rows = await incidentsOf(ctx, collector.connectionId);
        return rows.find((row) => row.status === 'open');
      },
      15_000,
      'a new incident',
    );
    expect(reopened.id).not.toBe(incident.id);
    expect(reopened.affected_records).toBe('5');
    expect((await findingsOf(ctx, reopened.id)).map((f) => ({ path: f.path, count: f.observation_count }))).toEqual([
      { path: '/extra', count: '5' },
    ]);
    expect(await slotState(collector.connectionId)).toEqual({ observationState: 'incident_open', openIncidentCount: 1 });
  });

  it("keeps an incident's summary naming every finding it holds, when each round adds only some", async () => {
    const { collector } = await collectorWith('3.0.3');
    // Round 1 brings one finding, round 2 another and not the first: the summary written in round
    // 2 must still name both, with every observation counted.
    expect((await sendEnvelopes(edge, collector, [caseEnvelope(collector, { shape: order({ extra: s('string') }) })])).status).toBe(202);
    await fixture.analysed();
    const [first] = await incidentsOf(ctx, collector.connectionId);
    expect(await findingsOf(ctx, first.id)).toHaveLength(1);
    expect((await sendEnvelopes(edge, collector, [caseEnvelope(collector, { shape: order({ other: s('integer') }) })])).status).toBe(202);
    await fixture.analysed();
    const [incident] = await incidentsOf(ctx, collector.connectionId);
    const findings = await findingsOf(ctx, incident.id);
    expect(findings.map((f) => f.path)).toEqual(['/extra', '/other']);
    expect(incident.affected_records).toBe('2');
    expect(incident.summary).toBe(incidentSummary(incident.kind, incident.operation_key, findings as Finding[], 2));
    expect(incident.summary).toContain('/extra');
    expect(incident.summary).toContain('/other');
  });

  it('shows per operation which declared properties the window never observed', async () => {
    const { collector } = await collectorWith('3.0.3');
    const seen = order({ lines: arr(obj({ sku: s('string') })), customer: obj({ email: s('string') }) });
    expect(
      (
        await sendEnvelopes(edge, collector, [
          caseEnvelope(collector, { shape: seen }),
          caseEnvelope(collector, { shape: order(), inspected: false }),
        ])
      ).status,
    ).toBe(202);
    await edge.shipped();
    const res = await callWithKey(ctx, apiKey, 'GET', `/v1/connections/${collector.connectionId}/coverage`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const operations = res.json().operations as {
      operationKey: string;
      observations: number;
      inspectedObservations: number;
      unobservedProperties: string[];
    }[];
    const byKey = new Map(operations.map((operation) => [operation.operationKey, operation]));
    expect(byKey.get(ORDER_200)).toMatchObject({
      observations: 2,
      inspectedObservations: 1,
      unobservedProperties: ['/count', '/customer/address', '/customer/address/city', '/customer/address/zip', '/lines/-/qty', '/note'],
    });
    expect(byKey.get('GET /v1/nodes:response:200')).toMatchObject({ observations: 0, unobservedProperties: ['/children', '/name'] });
  });

  it('reports nothing inside what a published document leaves unchecked, and drift around it (00-decisions §7)', async () => {
    // Vendor style: allOf over a referenced base, a oneOf property, a oneOf beside properties, a
    // nullable anyOf, a response without content and one with only non-JSON content.
    const card = { type: 'object', required: ['last4'], properties: { last4: { type: 'string' } } };
    const iban = { type: 'object', required: ['iban'], properties: { iban: { type: 'string' } } };
    const document = {
      openapi: '3.1.0',
      info: { title: 'Payments', version: '1' },
      paths: {
        '/v1/payments/{id}': {
          get: {
            responses: {
              '200': body({
                allOf: [
                  { $ref: '#/components/schemas/Base' },
                  { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
                ],
              }),
              '204': { description: 'gone' },
              '4XX': { description: 'receipt', content: { 'application/pdf': {} } },
            },
          },
        },
      },
      components: {
        schemas: {
          Base: {
            type: 'object',
            required: ['id'],
            properties: {
              id: { type: 'string' },
              method: { oneOf: [card, iban] },
              details: { type: 'object', properties: { kind: { type: 'string' } }, oneOf: [card, iban] },
              note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            },
          },
        },
      },
    };
    const collector = await createCollector(ctx, apiKey, { mode: 'sandbox' });
    const draft = await registerDraft(ctx, apiKey, collector.connectionId, openApiRegistration('vendor', document));
    expect(draft.skipped).toEqual([
      { pointer: '/components/schemas/Base/properties/details/oneOf', reason: 'composition keyword oneOf' },
      { pointer: '/components/schemas/Base/properties/method/oneOf', reason: 'composition keyword oneOf' },
      { pointer: '/paths/~1v1~1payments~1{id}/get/responses/4XX/content/application~1pdf', reason: 'non-JSON media type application/pdf' },
    ]);
    await activateOk(ctx, apiKey, collector.connectionId, draft.contract.id, { expectedActiveContractVersionId: null, reason: 'promote' });
    const route = { routeTemplate: '/v1/payments/{id}' };
    const inside = {
      id: s('string'),
      amount: s('integer'),
      note: s('null'),
      method: obj({ iban: s('string'), bic: s('string') }),
      details: obj({ kind: s('string'), last4: s('string') }),
    };
    const drifted = { ...inside, id: s('integer'), note: s('integer'), extra: s('boolean') } as Record<string, Shape>;
    delete drifted.amount;
    const answer = await sendEnvelopes(edge, collector, [
      caseEnvelope(collector, { transport: route, shape: obj(inside) }),
      caseEnvelope(collector, { transport: { ...route, statusCode: 204 }, shape: obj({ anything: s('string') }) }),
      caseEnvelope(collector, { transport: { ...route, statusCode: 404 }, shape: arr(s('integer')) }),
      caseEnvelope(collector, { transport: route, shape: obj(drifted) }),
    ]);
    expect(answer.status).toBe(202);
    await fixture.analysed();
    expect(await incidentView(collector.connectionId)).toEqual([
      {
        kind: 'schema-drift',
        operationKey: 'GET /v1/payments/{id}:response:200',
        findings: [
          { kind: 'required_field_missing', path: '/amount', expected: 'integer', observed: 'absent' },
          { kind: 'undeclared_field', path: '/extra', expected: 'undeclared', observed: 'boolean', forbidden: false },
          { kind: 'type_mismatch', path: '/id', expected: 'string', observed: 'integer' },
          { kind: 'type_mismatch', path: '/note', expected: 'string|null', observed: 'integer' },
        ],
      },
    ]);

    // The coverage read names the unchecked places (the 204 and 4XX payloads are unchecked whole
    // only when the document declares content it cannot compare).
    const res = await callWithKey(ctx, apiKey, 'GET', `/v1/connections/${collector.connectionId}/coverage`);
    expect(res.statusCode, res.body).toBe(200);
    const byKey = new Map(
      (res.json().operations as { operationKey: string; uncheckedProperties: string[] }[]).map((operation) => [
        operation.operationKey,
        operation,
      ]),
    );
    expect(byKey.get('GET /v1/payments/{id}:response:200')).toMatchObject({
      observations: 2,
      uncheckedProperties: ['/details', '/method'],
    });
    expect(byKey.get('GET /v1/payments/{id}:response:204')).toMatchObject({ observations: 1, uncheckedProperties: [] });
    expect(byKey.get('GET /v1/payments/{id}:response:4XX')).toMatchObject({ observations: 1, uncheckedProperties: [''] });
  });

  it("answers 404 for another workspace's connection and 403 without the scope on every evidence read", async () => {
    const { collector, versionId } = await collectorWith('3.0.3');
    const stranger = (await bootstrapWorkspace(ctx)).apiKey.key;
    const id = collector.connectionId;
    const reads: [string, string][] = [
      [`/v1/observations?integrationId=${id}`, 'observations:read'],
      [`/v1/connections/${id}/analytics`, 'observations:read'],
      [`/v1/connections/${id}/coverage`, 'observations:read'],
      [`/v1/incidents?integrationId=${id}&mode=sandbox`, 'incidents:read'],
      [`${contractUrl(id, versionId!)}/impact`, 'contracts:read'],
    ];
    const owner = await ctx.deps.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM connections WHERE id = $1', [id]);
    const unscoped = (
      await insertApiKey(ctx.deps.pool, {
        workspaceId: owner.rows[0].workspace_id,
        scopes: ['integrations:read'],
        expiresAt: null,
        createdBy: 'test',
        now: ctx.deps.clock.now(),
      })
    ).key;
    for (const [url, scope] of reads) {
      expect((await callWithKey(ctx, apiKey, 'GET', url)).statusCode, url).toBe(200);
      const foreign = await callWithKey(ctx, stranger, 'GET', url);
      expect(foreign.statusCode, url).toBe(404);
      const denied = await callWithKey(ctx, unscoped, 'GET', url);
      expect([denied.statusCode, denied.json().error], `${url} without ${scope}`).toEqual([403, 'insufficient_scope']);
    }
  });

  it('forgets analysed-batch markers past their retention, and only those', async () => {
    const stored = async () =>
      (
        await ctx.deps.pool.query<{ batch_id: string }>('SELECT batch_id FROM analysed_batches WHERE batch_id LIKE $1 ORDER BY batch_id', [
          `${stream}:%`,
        ])
      ).rows.map((row) => row.batch_id);
    expect(
      await waitFor(
        async () => {
          const ids = await stored();
          return ids.includes(`${stream}:old`) ? undefined : ids;
        },
        10_000,
        'the old marker to be pruned',
      ),
    ).toEqual([`${stream}:recent`]);
  });
});
