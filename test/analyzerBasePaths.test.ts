import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWithKey, type TestContext } from './helpers/context.js';
import { activateOk, contractUrl, openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createCollector, envelope, sendEnvelopes, type Collector, type Edge } from './helpers/ingest.js';
import { incidentsOf, reanalysed } from './helpers/analyzer.js';
import { startAnalysisFixture, type AnalysisFixture } from './helpers/edgeFixture.js';

// Issue 26, item 1, end to end: envelopes through the running edge, the analyzer (its compiled
// worker), incidents in PostgreSQL. An application whose base URL carries the vendor's `/v1`
// observes `/v1/models`; the vendor's document declares `/models` under the server `…/v1`.

const modelList = {
  type: 'object',
  required: ['object', 'data'],
  properties: { object: { type: 'string' }, data: { type: 'array', items: { type: 'object' } } },
};

function modelsDocument(servers?: unknown[]): Record<string, unknown> {
  return {
    openapi: '3.0.3',
    info: { title: 'Models', version: '1' },
    ...(servers ? { servers } : {}),
    paths: { '/models': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: modelList } } } } } } },
  };
}

const listShape = {
  kind: 'object',
  fields: { object: { kind: 'string' }, data: { kind: 'array', items: { kind: 'object', fields: {} } } },
};

describe('analyzer: server base paths', () => {
  let fixture: AnalysisFixture;
  let ctx: TestContext;
  let edge: Edge;
  let apiKey: string;

  beforeAll(async () => {
    fixture = await startAnalysisFixture();
    ({ ctx, edge, apiKey } = fixture);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  function call(collector: Collector, routeTemplate: string): Record<string, unknown> {
    const base = envelope(collector);
    return {
      ...base,
      transport: {
        ...(base.transport as Record<string, unknown>),
        method: 'GET',
        routeTemplate,
        payloadLocation: 'response',
        statusCode: 200,
      },
      payload: { ...(base.payload as Record<string, unknown>), schemaShape: listShape },
    };
  }

  it('opens unknown-operation for /v1/models without servers; the version with the /v1 server resolves it and matches new traffic', async () => {
    const collector = await createCollector(ctx, apiKey, { mode: 'sandbox' });
    const v1 = (await registerDraft(ctx, apiKey, collector.connectionId, openApiRegistration('v1', modelsDocument()))).contract.id;
    await activateOk(ctx, apiKey, collector.connectionId, v1, { expectedActiveContractVersionId: null, reason: 'promote' });
    expect((await sendEnvelopes(edge, collector, [call(collector, '/v1/models'), call(collector, '/v1/models')])).status).toBe(202);
    await fixture.analysed();
    const [incident, ...others] = await incidentsOf(ctx, collector.connectionId);
    expect(others).toEqual([]);
    expect({
      kind: incident.kind,
      operationKey: incident.operation_key,
      status: incident.status,
      affected: incident.affected_records,
    }).toEqual({ kind: 'unknown-operation', operationKey: 'GET /v1/models:response:200', status: 'open', affected: '2' });

    // The same document with the vendor's server: the contract read shows the base path.
    const v2 = (
      await registerDraft(
        ctx,
        apiKey,
        collector.connectionId,
        openApiRegistration('v2', modelsDocument([{ url: 'https://api.example.test/v1' }])),
      )
    ).contract.id;
    const read = await callWithKey(ctx, apiKey, 'GET', contractUrl(collector.connectionId, v2));
    expect(read.statusCode, read.body).toBe(200);
    expect(
      read.json().contract.operations.map((op: { operationKey: string; basePaths: string[] }) => [op.operationKey, op.basePaths]),
    ).toEqual([['GET /models:response:200', ['/v1']]]);
    const withoutServers = await callWithKey(ctx, apiKey, 'GET', contractUrl(collector.connectionId, v1));
    expect(withoutServers.json().contract.operations[0].basePaths).toEqual([]);

    // The dry-run predicts it, activation's reanalysis does it.
    const impact = await callWithKey(ctx, apiKey, 'GET', `${contractUrl(collector.connectionId, v2)}/impact`);
    expect(impact.statusCode, impact.body).toBe(200);
    expect(impact.json().resolves).toEqual([
      { incidentId: incident.id, kind: 'unknown-operation', operationKey: 'GET /v1/models:response:200', affectedRecords: 2 },
    ]);
    expect(impact.json().opens).toEqual([]);
    await activateOk(ctx, apiKey, collector.connectionId, v2, { expectedActiveContractVersionId: v1, reason: 'promote' });
    await reanalysed(ctx, collector.connectionId);
    const [resolved] = await incidentsOf(ctx, collector.connectionId);
    expect({ id: resolved.id, status: resolved.status, resolution: resolved.resolution_state }).toEqual({
      id: incident.id,
      status: 'resolved',
      resolution: 'resolved_by_contract',
    });

    // New traffic, with and without the base path, matches `GET /models`: nothing opens.
    expect((await sendEnvelopes(edge, collector, [call(collector, '/v1/models'), call(collector, '/models')])).status).toBe(202);
    await fixture.analysed();
    expect((await incidentsOf(ctx, collector.connectionId)).map((row) => [row.id, row.status])).toEqual([[incident.id, 'resolved']]);
    const connection = await callWithKey(ctx, apiKey, 'GET', `/v1/connections/${collector.connectionId}`);
    expect(connection.json()).toMatchObject({ observationState: 'observed', openIncidentCount: 0 });
  });
});
