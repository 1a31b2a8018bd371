import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpCredentialEpoch, RedisKeys, ANALYSIS_CONSUMER_GROUP } from '../shared/redis.js';
import { usagePeriodOf } from '../shared/usagePeriod.js';
import { RECEIPT_TO_ADMISSION_MAX_MS } from '../shared/admissionTiming.js';
import { advanceTestClock } from '../shared/clock.js';
import type { ClickHouseClient } from '../shared/clickhouse/client.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  createTestContext,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';
import {
  FINGERPRINT,
  checkConnection,
  countObservations,
  createCollector,
  edgeSeconds,
  envelope,
  newEventId,
  observationRows,
  postBatch,
  ManualClock,
  sendEnvelopes,
  shippedByAll,
  signatureHeader,
  startEdge,
  testClickHouse,
  type Collector,
  type Edge,
} from './helpers/ingest.js';

// Document 03 "Ingestion" over real HTTP: the uWebSockets.js edge in-process, the real test
// PostgreSQL, Redis and ClickHouse. Every test makes its own workspace and Integration.

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;

beforeAll(async () => {
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
});
afterAll(async () => {
  await edge.close();
  await clickhouse.close();
  await ctx.close();
});

const BATCH_SHAPE = { error: 'expected { envelopes: [...] }' };

async function setup(input: Partial<Pick<Collector, 'mode' | 'protocol' | 'direction'>> = {}) {
  const boot = await bootstrapWorkspace(ctx);
  const collector = await createCollector(ctx, boot.apiKey.key, input);
  return { boot, collector };
}

async function credentialAction(
  apiKey: string,
  connectionId: string,
  action: 'issue' | 'rotate' | 'revoke',
): Promise<{ ingestToken?: string }> {
  const connection = await callWithKey(ctx, apiKey, 'GET', `/v1/connections/${connectionId}`);
  const res = await callWithKey(ctx, apiKey, 'POST', `/v1/connections/${connectionId}/credentials/${action}`, {
    idempotencyKey: newIdempotencyKey(),
    body: { expectedRevision: connection.json().revision },
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function analysisJobs(connectionId: string): Promise<Record<string, string>[]> {
  // A batch's job is added once the log shipper has its rows in ClickHouse.
  await shippedByAll();
  const entries = await ctx.deps.redis.xrange(RedisKeys.analysisJobs, '-', '+');
  return entries
    .map(([, fields]) =>
      Object.fromEntries(
        Array.from({ length: fields.length / 2 }, (_, pair): [string, string] => [fields[2 * pair], fields[2 * pair + 1]]),
      ),
    )
    .filter((job) => job.connectionId === connectionId);
}

describe('POST /ingest: accepted batches', () => {
  it('answers 202 with results aligned by index and persists each envelope with the credential scope', async () => {
    const { boot, collector } = await setup();
    const items = [envelope(collector), envelope(collector, { envelopeVersion: '0.1' }), envelope(collector, { envelopeVersion: '0.3' })];
    const res = await sendEnvelopes(edge, collector, items);
    expect(res.status).toBe(202);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      accepted: 3,
      persisted: 3,
      results: items.map((item, index) => ({ index, accepted: true, eventId: item.eventId })),
    });
    const rows = await observationRows(clickhouse, collector.connectionId);
    expect(rows).toHaveLength(3);
    const first = rows.find((row) => row.event_id === items[0].eventId)!;
    expect(first).toMatchObject({
      workspace_id: boot.workspace.id,
      account_id: boot.account.id,
      integration_id: collector.workspaceIntegrationId,
      integration_key: collector.integrationKey,
      tenant_id: boot.workspace.tenantId,
      environment_id: collector.environmentId,
      mode: 'sandbox',
      envelope_version: '0.2',
      direction: 'outbound',
      protocol: 'http-api',
      event_type: 'order.created',
      operation_key: 'GET /v1/orders/{orderId}:response:200',
      method: 'GET',
      route_template: '/v1/orders/{orderId}',
      payload_location: 'response',
      status_code: 200,
      duration_ms: 42.5,
      attempt: 1,
      observed_fingerprint: FINGERPRINT,
      schema_fingerprint: FINGERPRINT,
      schema_inspected: 1,
      redaction_policy_version: '2025-01',
      source_event_id_hash: 'hmac:1f2e3d',
      idempotency_key_hash: '',
      hash_namespace: 'orders',
      outcome_accepted: 1,
      business_object_type: 'order',
      business_object_id_hash: 'hmac:9a8b7c',
    });
    expect(Number(first.occurred_at_ms)).toBe(Date.parse(items[0].occurredAt as string));
    expect(JSON.parse(first.schema_shape as string)).toEqual((items[0].payload as { schemaShape: unknown }).schemaShape);
    expect(Math.abs(Number(first.received_at_ms) - Date.now())).toBeLessThan(60_000);
    expect(rows.map((row) => row.tenant_id)).not.toContain('ten_authenticated');
    expect(rows.map((row) => row.environment_id)).not.toContain('env_authenticated');
  });

  it('stores awkward values exactly: backslashes, control characters in field names, tiny and huge numbers', async () => {
    const { collector } = await setup();
    const shape = {
      kind: 'object',
      fields: {
        'tab\there': { kind: 'string' },
        'line\nbreak\r': { kind: 'null' },
        'back\\slash"quote': { kind: 'array', items: { kind: 'integer' } },
        'nul\u0000\b\f': { kind: 'number' },
        'ü€😀': { kind: 'boolean' },
      },
    };
    const item = envelope(collector, {
      eventType: 'order\\created\\t',
      correlation: { sourceEventIdHash: 'hmac:\\n', hashNamespace: 'a\\\\b' },
      payload: { storage: 'none', schemaFingerprint: FINGERPRINT, schemaShape: shape, redactionPolicyVersion: 'v\\1' },
    });
    (item.transport as Record<string, unknown>).durationMs = 1e-7;
    const other = envelope(collector);
    (other.transport as Record<string, unknown>).durationMs = 86_400_000;
    expect((await sendEnvelopes(edge, collector, [item, other])).status).toBe(202);
    const rows = await observationRows(clickhouse, collector.connectionId);
    const row = rows.find((candidate) => candidate.event_id === item.eventId)!;
    expect(row).toMatchObject({
      event_type: 'order\\created\\t',
      source_event_id_hash: 'hmac:\\n',
      hash_namespace: 'a\\\\b',
      redaction_policy_version: 'v\\1',
    });
    expect(JSON.parse(row.schema_shape as string)).toEqual(shape);
    expect(Number(row.duration_ms)).toBe(1e-7);
    expect(Number(rows.find((candidate) => candidate.event_id === other.eventId)!.duration_ms)).toBe(86_400_000);
  });

  it('takes the mode from the stored connection (Live)', async () => {
    const { collector } = await setup({ mode: 'live' });
    const res = await sendEnvelopes(edge, collector, [envelope(collector)]);
    expect(res.status).toBe(202);
    const rows = await observationRows(clickhouse, collector.connectionId);
    expect(rows.map((row) => [row.mode, row.environment_id])).toEqual([['live', collector.environmentId]]);
  });

  it("accepts the credential's exact tenant and environment ids in place of the placeholders", async () => {
    const { boot, collector } = await setup();
    const res = await sendEnvelopes(edge, collector, [
      envelope(collector, { tenantId: boot.workspace.tenantId, environmentId: collector.environmentId }),
    ]);
    expect(res.status).toBe(202);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(1);
  });

  it('persists the same batch once: the resend is accepted, counted as duplicates and not written again', async () => {
    const { boot, collector } = await setup();
    const items = [envelope(collector), envelope(collector)];
    const first = await sendEnvelopes(edge, collector, items);
    expect(first.body).toMatchObject({ accepted: 2, persisted: 2 });
    const second = await sendEnvelopes(edge, collector, items);
    expect(second.status).toBe(202);
    expect(second.body).toEqual({
      accepted: 2,
      persisted: 0,
      results: items.map((item, index) => ({ index, accepted: true, eventId: item.eventId })),
    });
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
    const { period } = usagePeriodOf(new Date());
    expect(await ctx.deps.redis.get(RedisKeys.sandboxMonthlyUsage(boot.account.id, period))).toBe('2');
    expect(await ctx.deps.redis.get(RedisKeys.workspaceMonthlyUsage(boot.account.id, boot.workspace.id, period, 'sandbox'))).toBe('2');
    expect(await analysisJobs(collector.connectionId)).toHaveLength(1);
  });

  it('treats a repeated eventId inside one batch as a duplicate of the first', async () => {
    const { collector } = await setup();
    const item = envelope(collector);
    const res = await sendEnvelopes(edge, collector, [item, { ...item }]);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 2, persisted: 1 });
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(1);
  });

  it('enqueues one analysis job per batch with the new eventIds, for the consumer group', async () => {
    const { boot, collector } = await setup();
    const known = envelope(collector);
    await sendEnvelopes(edge, collector, [known]);
    const fresh = [envelope(collector), envelope(collector)];
    await sendEnvelopes(edge, collector, [known, ...fresh]);
    const jobs = await analysisJobs(collector.connectionId);
    expect(jobs).toHaveLength(2);
    expect(jobs[1]).toMatchObject({
      workspaceId: boot.workspace.id,
      mode: 'sandbox',
      eventIds: fresh.map((item) => item.eventId).join(','),
    });
    expect(jobs[1].batchId).toMatch(/^[0-9a-f]{12}[0-9a-z]+$/);
    const rows = await observationRows(clickhouse, collector.connectionId);
    expect(
      rows
        .filter((row) => row.batch_id === jobs[1].batchId)
        .map((row) => row.event_id)
        .sort(),
    ).toEqual(fresh.map((item) => item.eventId).sort());
    const groups = (await ctx.deps.redis.xinfo('GROUPS', RedisKeys.analysisJobs)) as unknown[][];
    expect(groups.map((group) => group[1])).toContain(ANALYSIS_CONSUMER_GROUP);
  });

  it('enqueues nothing for a batch without new observations', async () => {
    const { collector } = await setup();
    const res = await sendEnvelopes(edge, collector, [{ ...envelope(collector), eventType: '' }]);
    expect(res.status).toBe(207);
    expect(await analysisJobs(collector.connectionId)).toHaveLength(0);
  });

  it('answers an empty batch 202 with nothing persisted', async () => {
    const { collector } = await setup();
    const res = await sendEnvelopes(edge, collector, []);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 0, persisted: 0, results: [] });
  });

  it('accepts 50 envelopes in a batch', async () => {
    const { collector } = await setup();
    const res = await sendEnvelopes(
      edge,
      collector,
      Array.from({ length: 50 }, () => envelope(collector)),
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 50, persisted: 50 });
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(50);
  });

  it('accepts each protocol of the operation table', async () => {
    for (const [protocol, direction] of [
      ['http-webhook', 'inbound'],
      ['queue', 'outbound'],
      ['queue', 'inbound'],
      ['scheduled-feed', 'inbound'],
    ] as const) {
      const { collector } = await setup({ protocol, direction });
      const res = await sendEnvelopes(edge, collector, [envelope(collector)]);
      expect(res.status, `${direction} ${protocol}`).toBe(202);
      const [row] = await observationRows(clickhouse, collector.connectionId);
      expect(row).toMatchObject({ protocol, direction, payload_location: 'message', method: 'POST' });
    }
  });

  it('persists a transport error (statusCode 0) as an observation', async () => {
    const { collector } = await setup();
    const item = envelope(collector);
    (item.transport as Record<string, unknown>).statusCode = 0;
    expect((await sendEnvelopes(edge, collector, [item])).status).toBe(202);
    const [row] = await observationRows(clickhouse, collector.connectionId);
    expect(row).toMatchObject({ status_code: 0, operation_key: 'GET /v1/orders/{orderId}:response:0' });
  });

  it('accepts payload.schemaInspected in 0.3 and stores it; rejects it in 0.1 and 0.2', async () => {
    const { collector } = await setup();
    const inspectedFalse = envelope(collector, { envelopeVersion: '0.3' });
    (inspectedFalse.payload as Record<string, unknown>).schemaInspected = false;
    const older = ['0.1', '0.2'].map((version) => {
      const item = envelope(collector, { envelopeVersion: version });
      (item.payload as Record<string, unknown>).schemaInspected = false;
      return item;
    });
    const res = await sendEnvelopes(edge, collector, [inspectedFalse, ...older]);
    expect(res.status).toBe(207);
    expect(res.body?.results).toEqual([
      { index: 0, accepted: true, eventId: inspectedFalse.eventId },
      { index: 1, accepted: false, issues: ['/payload/schemaInspected is not allowed before envelope version 0.3'] },
      { index: 2, accepted: false, issues: ['/payload/schemaInspected is not allowed before envelope version 0.3'] },
    ]);
    const rows = await observationRows(clickhouse, collector.connectionId);
    expect(rows.map((row) => [row.event_id, row.schema_inspected, row.envelope_version])).toEqual([[inspectedFalse.eventId, 0, '0.3']]);
  });
});

describe('POST /ingest: 207 mixed batches', () => {
  it('reports the exact issue texts per item and persists only the accepted items', async () => {
    const { collector } = await setup();
    const good = envelope(collector);
    const items = [
      envelope(collector, { integrationId: 'svc_int_01aaaaaaaaaaaaaaaaaaaaaaaa' }),
      good,
      envelope(collector, { tenantId: 'ten_01aaaaaaaaaaaaaaaaaaaaaaaa' }),
      envelope(collector, { environmentId: 'env_01aaaaaaaaaaaaaaaaaaaaaaaa' }),
      envelope(collector, {
        direction: 'inbound',
        protocol: 'http-webhook',
        transport: { method: 'POST', routeTemplate: '/hooks', payloadLocation: 'message', statusCode: 200, durationMs: 1, attempt: 1 },
      }),
      envelope(collector, {
        transport: { method: 'GET', routeTemplate: '/v1/orders', payloadLocation: 'response', statusCode: 42, durationMs: 1, attempt: 1 },
      }),
      'not an envelope',
      envelope(collector, { protocol: 'queue', integrationId: 'svc_int_x', extra: true }),
    ];
    const res = await sendEnvelopes(edge, collector, items);
    expect(res.status).toBe(207);
    expect(res.body).toEqual({
      accepted: 1,
      persisted: 1,
      results: [
        { index: 0, accepted: false, issues: ['integration does not match credential'] },
        { index: 1, accepted: true, eventId: good.eventId },
        { index: 2, accepted: false, issues: ['tenant does not match credential'] },
        { index: 3, accepted: false, issues: ['environment does not match credential'] },
        { index: 4, accepted: false, issues: ['integration is not available'] },
        { index: 5, accepted: false, issues: ['/transport/statusCode must be 0 or an integer from 100 through 599'] },
        { index: 6, accepted: false, issues: ['envelope must be an object'] },
        {
          index: 7,
          accepted: false,
          issues: ['integration does not match credential', 'integration is not available', '/extra is not allowed'],
        },
      ],
    });
    expect(await observationRows(clickhouse, collector.connectionId)).toEqual([expect.objectContaining({ event_id: good.eventId })]);
  });

  it('answers 207 when every item is rejected, with nothing persisted', async () => {
    const { collector } = await setup();
    const res = await sendEnvelopes(edge, collector, [
      envelope(collector, { eventId: 'event-1' }),
      envelope(collector, { envelopeVersion: '1.0' }),
    ]);
    expect(res.status).toBe(207);
    expect(res.body).toEqual({
      accepted: 0,
      persisted: 0,
      results: [
        { index: 0, accepted: false, issues: ['/eventId must be evt_ followed by 1 to 124 letters, digits or . _ : -'] },
        { index: 1, accepted: false, issues: ['/envelopeVersion must be one of 0.1, 0.2, 0.3'] },
      ],
    });
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
  });

  it('accepts the corrected items when the client resends only the rejected ones (03 caller rules)', async () => {
    const { collector } = await setup();
    const good = envelope(collector);
    const bad = envelope(collector, { eventType: '' });
    const first = await sendEnvelopes(edge, collector, [good, bad]);
    expect(first.status).toBe(207);
    const fixed = await sendEnvelopes(edge, collector, [{ ...bad, eventType: 'order.updated' }]);
    expect(fixed.status).toBe(202);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
  });
});

describe('POST /ingest: malformed batches', () => {
  it('answers 400 with the literal phrase for a body that is not an object with an envelopes array', async () => {
    const { collector } = await setup();
    for (const body of [
      '[]',
      '{}',
      'null',
      '"envelopes"',
      '3',
      '{"envelopes":{}}',
      '{"envelopes":"x"}',
      '{"envelopes":[],"extra":1}',
      '{"Envelopes":[]}',
    ]) {
      const res = await postBatch(edge, collector, body);
      expect(res.status, body).toBe(400);
      expect(res.body, body).toEqual(BATCH_SHAPE);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('answers 400 with the literal phrase for more than 50 envelopes, persisting none of them', async () => {
    const { collector } = await setup();
    const res = await sendEnvelopes(
      edge,
      collector,
      Array.from({ length: 51 }, () => envelope(collector)),
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual(BATCH_SHAPE);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
  });

  it('answers unparsable JSON and a non-JSON content type with 400 invalid_request', async () => {
    const { collector } = await setup();
    for (const body of ['{"envelopes": [', '', 'envelopes=1', '{"envelopes":[]}garbage']) {
      const res = await postBatch(edge, collector, body);
      expect(res.status, body).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request' });
    }
    const wrongType = await postBatch(edge, collector, '{"envelopes":[]}', { headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toEqual({ error: 'invalid_request' });
    const noType = await postBatch(edge, collector, '{"envelopes":[]}', { headers: { 'content-type': null } });
    expect(noType.status).toBe(400);
    const withCharset = await postBatch(edge, collector, '{"envelopes":[]}', {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(withCharset.status).toBe(202);
  });
});

/**
 * Writes a raw HTTP/1.1 request; the body writer gets `write` and `answered()` (true once the
 * server sent something) and the result holds what the server sent until it closed or `waitMs`.
 */
function rawRequest(
  port: number,
  head: string,
  body: (write: (chunk: Buffer) => boolean, answered: () => boolean) => Promise<void>,
  waitMs = 5_000,
): Promise<{ response: string; closedBeforeBodyEnd: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let response = '';
    let closed = false;
    let bodyDone = false;
    let closedBeforeBodyEnd = false;
    socket.on('data', (data) => {
      response += data.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      if (!bodyDone) closedBeforeBodyEnd = true;
      resolve({ response, closedBeforeBodyEnd });
    });
    socket.on('connect', async () => {
      socket.write(head);
      await body(
        (chunk) => !closed && socket.write(chunk),
        () => response.length > 0 || closed,
      );
      bodyDone = true;
      setTimeout(() => {
        socket.destroy();
      }, waitMs);
    });
  });
}

describe('POST /ingest: body limit (1 MiB, 413 request_too_large)', () => {
  // The refusals themselves, on both adapters and either framing: test/ingestTooLarge.test.ts.
  it('accepts a body of exactly 1 MiB', async () => {
    const { collector } = await setup();
    const json = JSON.stringify({ envelopes: [envelope(collector)] });
    const body = json + ' '.repeat(1024 * 1024 - Buffer.byteLength(json));
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    const res = await postBatch(edge, collector, body);
    expect(res.status).toBe(202);
    const over = await postBatch(edge, collector, `${body} `);
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: 'request_too_large' });
  });
});

describe('POST /ingest: authentication (401 unauthenticated)', () => {
  it('refuses missing or malformed connection keys and tokens without a reason, and unknown ones alike', async () => {
    const { collector } = await setup();
    const other = (await setup()).collector;
    const item = envelope(collector);
    const cases: Record<string, string | null>[] = [
      { 'x-service-connection': null },
      { 'x-service-connection': 'svc_conn_v1.short' },
      { 'x-service-connection': collector.connectionKey.toUpperCase() },
      { 'x-service-connection': 'svc_conn_v1.01aaaaaaaaaaaaaaaaaaaaaaaa' },
      { 'x-service-connection': other.connectionKey },
      { authorization: null },
      { authorization: `Basic ${collector.ingestToken}` },
      { authorization: `Bearer ${collector.ingestToken}x` },
      { authorization: 'Bearer svc_ing_short' },
      { authorization: `Bearer ${other.ingestToken}` },
      { authorization: `Bearer  ${collector.ingestToken}` },
    ];
    for (const headers of cases) {
      const res = await sendEnvelopes(edge, collector, [item], { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body, JSON.stringify(headers)).toEqual({ error: 'unauthenticated' });
    }
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
    expect(await countObservations(clickhouse, other.connectionId)).toBe(0);
  });

  it('refuses a missing or malformed signature header with reason malformed', async () => {
    const { collector } = await setup();
    const item = envelope(collector);
    const body = JSON.stringify({ envelopes: [item] });
    const t = await edgeSeconds(edge);
    const good = signatureHeader(collector.ingestToken, body, t);
    const hex = good.split('v1=')[1];
    for (const signature of [
      null,
      '',
      `v1=${hex},t=${t}`,
      `t=${t},v1=${hex.toUpperCase()}`,
      `t=${t},v1=${hex.slice(1)}`,
      `t=${t}, v1=${hex}`,
      `t=${t},v1=${hex},v2=${hex}`,
      `sha256=${hex}`,
    ]) {
      const res = await postBatch(edge, collector, body, { headers: { 'x-service-signature': signature } });
      expect(res.status, String(signature)).toBe(401);
      expect(res.body).toEqual({ error: 'unauthenticated', reason: 'malformed' });
    }
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
  });

  it('refuses a timestamp outside the 300-second window with reason stale', async () => {
    const { collector } = await setup();
    const now = await edgeSeconds(edge);
    // One second of margin: the edge's clock may tick between reading it and the request. The
    // exact boundary (300 s fresh, 301 s stale) is checked on isFresh itself.
    for (const t of [now - 302, now + 302, 0]) {
      const res = await sendEnvelopes(edge, collector, [envelope(collector)], { t });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthenticated', reason: 'stale' });
    }
    for (const t of [now - 290, now + 290]) expect((await sendEnvelopes(edge, collector, [envelope(collector)], { t })).status).toBe(202);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
  });

  it('refuses a wrong secret or a body that differs from the signed string with reason mismatch', async () => {
    const { collector } = await setup();
    const other = (await setup()).collector;
    const wrongSecret = await sendEnvelopes(edge, collector, [envelope(collector)], { signingKey: other.ingestToken });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toEqual({ error: 'unauthenticated', reason: 'mismatch' });
    const signed = JSON.stringify({ envelopes: [envelope(collector)] });
    const t = await edgeSeconds(edge);
    const reserialised = JSON.stringify(JSON.parse(signed), null, 1);
    const res = await postBatch(edge, collector, reserialised, {
      headers: { 'x-service-signature': signatureHeader(collector.ingestToken, signed, t) },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthenticated', reason: 'mismatch' });
    const otherTime = await postBatch(edge, collector, signed, {
      headers: { 'x-service-signature': signatureHeader(collector.ingestToken, signed, t - 1).replace(`t=${t - 1}`, `t=${t}`) },
    });
    expect(otherTime.body).toEqual({ error: 'unauthenticated', reason: 'mismatch' });
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(0);
  });

  it('authenticates before it parses: a bad body with bad credentials is 401', async () => {
    const { collector } = await setup();
    const res = await postBatch(edge, collector, '{not json', { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    const malformed = await postBatch(edge, collector, '{not json', { headers: { 'x-service-signature': 'nope' } });
    expect(malformed.body).toEqual({ error: 'unauthenticated', reason: 'malformed' });
  });
});

describe('POST /ingest: credential lifecycle takes effect on the next request', () => {
  it('refuses a rotated-away token on the very next request and accepts the new one', async () => {
    const { boot, collector } = await setup();
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    const rotated = await credentialAction(boot.apiKey.key, collector.connectionId, 'rotate');
    expect(rotated.ingestToken).toMatch(/^svc_ing_/);
    const stale = envelope(collector);
    const old = await sendEnvelopes(edge, collector, [stale]);
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error: 'unauthenticated' });
    expect(await countObservations(clickhouse, collector.connectionId, [stale.eventId as string])).toBe(0);
    const renewed = { ...collector, ingestToken: rotated.ingestToken! };
    expect((await sendEnvelopes(edge, renewed, [envelope(renewed)])).status).toBe(202);
    expect((await checkConnection(edge, collector)).status).toBe(401);
    expect((await checkConnection(edge, renewed)).status).toBe(200);
  });

  it('accepts the new token on the first request after a rotation even with the old binding cached', async () => {
    const { boot, collector } = await setup();
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    const rotated = await credentialAction(boot.apiKey.key, collector.connectionId, 'rotate');
    const renewed = { ...collector, ingestToken: rotated.ingestToken! };
    expect((await sendEnvelopes(edge, renewed, [envelope(renewed)])).status).toBe(202);
  });

  it('refuses a revoked token at once, and a re-issued token works', async () => {
    const { boot, collector } = await setup();
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    await credentialAction(boot.apiKey.key, collector.connectionId, 'revoke');
    const res = await sendEnvelopes(edge, collector, [envelope(collector)]);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthenticated' });
    const reissued = await credentialAction(boot.apiKey.key, collector.connectionId, 'issue');
    const renewed = { ...collector, ingestToken: reissued.ingestToken! };
    expect((await sendEnvelopes(edge, renewed, [envelope(renewed)])).status).toBe(202);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
  });

  it('refuses ingestion for an archived workspace and resumes after restore', async () => {
    const { boot, collector } = await setup();
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    expect((await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/archive`)).statusCode).toBe(200);
    try {
      const res = await sendEnvelopes(edge, collector, [envelope(collector)]);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthenticated' });
    } finally {
      expect((await callWithSession(ctx, boot.sessionToken, 'POST', `/workspaces/${boot.workspace.slug}/restore`)).statusCode).toBe(200);
    }
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(2);
  });

  it('re-verifies a batch against the re-read binding when the epoch moved, and accepts it when the token still holds', async () => {
    const { collector } = await setup();
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    await bumpCredentialEpoch(ctx.deps.redis, collector.accountId, collector.connectionId);
    // Over 4 KB, so the edge moves the body to a worker thread and back rather than copying it:
    // the re-verification reads the body that came back.
    const batch = Array.from({ length: 12 }, () => envelope(collector));
    const res = await sendEnvelopes(edge, collector, batch);
    expect(res.status).toBe(202);
    expect(
      await countObservations(
        clickhouse,
        collector.connectionId,
        batch.map((item) => item.eventId as string),
      ),
    ).toBe(12);
  });

  it('refuses a deleted connection (its deletion moves the credential epoch)', async () => {
    const { collector } = await setup();
    expect((await sendEnvelopes(edge, collector, [envelope(collector)])).status).toBe(202);
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [collector.connectionId]);
    await bumpCredentialEpoch(ctx.deps.redis, collector.accountId, collector.connectionId);
    const res = await sendEnvelopes(edge, collector, [envelope(collector)]);
    expect(res.status).toBe(401);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(1);
  });

  it('answers 409 integration_not_available when the binding moves again during the re-check', async () => {
    const { collector } = await setup();
    let racing = false;
    const pool = {
      query: async (...args: Parameters<typeof ctx.deps.pool.query>) => {
        const result = await ctx.deps.pool.query(...(args as unknown as [string, unknown[]]));
        if (racing && String(args[0]).includes('JOIN integrations'))
          await bumpCredentialEpoch(ctx.deps.redis, collector.accountId, collector.connectionId);
        return result;
      },
    } as unknown as Pick<typeof ctx.deps.pool, 'query'>;
    const racingEdge = await startEdge(ctx, clickhouse, { pool });
    try {
      expect((await sendEnvelopes(racingEdge, collector, [envelope(collector)])).status).toBe(202);
      racing = true;
      await bumpCredentialEpoch(ctx.deps.redis, collector.accountId, collector.connectionId);
      const item = envelope(collector);
      const res = await sendEnvelopes(racingEdge, collector, [item]);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'integration_not_available' });
      expect(await countObservations(clickhouse, collector.connectionId, [item.eventId as string])).toBe(0);
      racing = false;
      expect((await sendEnvelopes(racingEdge, collector, [item])).status).toBe(202);
    } finally {
      await racingEdge.close();
    }
  });
});

describe('GET /v1/collector/connection', () => {
  it('answers the binding of a valid signed check, private', async () => {
    const { collector } = await setup({ mode: 'live' });
    const res = await checkConnection(edge, collector);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      connectionId: collector.connectionId,
      integrationKey: collector.integrationKey,
      mode: 'live',
      environmentId: collector.environmentId,
      direction: 'outbound',
      protocol: 'http-api',
      credentialStatus: 'active',
      // The smallest admission windows of a Live connection: its own and its workspace's.
      limits: {
        observationsPerMinute: Math.min(edge.config.limits.integrationObservationsPerMin, edge.config.limits.workspaceObservationsPerMin),
        requestsPerMinute: edge.config.limits.integrationRequestsPerMin,
      },
      // No active contract: nothing for the collector to templatise with.
      activeContractVersionId: null,
      routes: [],
      routesTruncated: false,
    });
  });

  it("tells collectors the budget of the windows the admission enforces, a Sandbox account's included", async () => {
    const limited = await startEdge(ctx, clickhouse, {
      limits: {
        integrationObservationsPerMin: 700,
        integrationRequestsPerMin: 70,
        workspaceObservationsPerMin: 500,
        sandboxAccountEnvelopesPerMin: 300,
        sandboxAccountRequestsPerMin: 90,
      },
    });
    try {
      const live = (await setup({ mode: 'live' })).collector;
      const sandbox = (await setup({ mode: 'sandbox' })).collector;
      expect((await checkConnection(limited, live)).body?.limits).toStrictEqual({ observationsPerMinute: 500, requestsPerMinute: 70 });
      expect((await checkConnection(limited, sandbox)).body?.limits).toStrictEqual({ observationsPerMinute: 300, requestsPerMinute: 70 });
    } finally {
      await limited.close();
    }
  });

  it('answers 401 when credentials or signing fail', async () => {
    const { collector } = await setup();
    const other = (await setup()).collector;
    expect((await checkConnection(edge, collector, { headers: { authorization: `Bearer ${other.ingestToken}` } })).body).toEqual({
      error: 'unauthenticated',
    });
    expect((await checkConnection(edge, collector, { headers: { 'x-service-signature': 't=1,v1=00' } })).body).toEqual({
      error: 'unauthenticated',
      reason: 'malformed',
    });
    expect((await checkConnection(edge, collector, { t: (await edgeSeconds(edge)) - 600 })).body).toEqual({
      error: 'unauthenticated',
      reason: 'stale',
    });
    expect((await checkConnection(edge, collector, { signedBody: '{}' })).body).toEqual({ error: 'unauthenticated', reason: 'mismatch' });
    expect((await checkConnection(edge, collector, { signingKey: other.ingestToken })).body).toEqual({
      error: 'unauthenticated',
      reason: 'mismatch',
    });
  });

  it('answers 429 connection_rate_limited with Retry-After at its per-client limit', async () => {
    const { collector } = await setup();
    const limited = await startEdge(ctx, clickhouse, { ingest: { connectionChecksPerMin: 3 } });
    try {
      for (let index = 0; index < 3; index += 1) expect((await checkConnection(limited, collector)).status).toBe(200);
      const res = await checkConnection(limited, collector);
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'connection_rate_limited' });
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Another client (Connection key) has its own budget; ingestion is not affected.
      const other = (await setup()).collector;
      expect((await checkConnection(limited, other)).status).toBe(200);
      expect((await sendEnvelopes(limited, collector, [envelope(collector)])).status).toBe(202);
    } finally {
      await limited.close();
    }
  });

  it('uses the default budget of 60 checks a minute per client', async () => {
    const { collector } = await setup();
    const statuses: number[] = [];
    for (let index = 0; index < 61; index += 1) statuses.push((await checkConnection(edge, collector)).status);
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);
    expect(statuses[60]).toBe(429);
  });
});

describe('write-ahead log shipping', () => {
  it('answers concurrent requests once durable, then ships their rows in few inserts', async () => {
    const grouped = await startEdge(ctx, clickhouse, { ingest: { shipIntervalMs: 300 } });
    try {
      const { collector } = await setup({ mode: 'live' });
      const batches = Array.from({ length: 12 }, () => [envelope(collector), envelope(collector)]);
      const answers = await Promise.all(batches.map((items) => sendEnvelopes(grouped, collector, items)));
      expect(answers.map((answer) => answer.status)).toEqual(batches.map(() => 202));
      await grouped.shipped();
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(24);
      const metrics = await (await fetch(`${grouped.url}/metrics`)).text();
      const inserts = Number(/^ingest_insert_rows_count\{[^}]*\} (\d+)/m.exec(metrics)![1]);
      const rows = Number(/^ingest_insert_rows_sum\{[^}]*\} (\d+)/m.exec(metrics)![1]);
      expect(rows).toBe(24);
      expect(inserts).toBeLessThan(12);
    } finally {
      await grouped.close();
    }
  });

  it('refuses with 503 a batch it would admit later than RECEIPT_TO_ADMISSION_MAX_MS after its receipt, writing nothing', async () => {
    // Each reading of this clock is past the bound after the one before: the edge's reading before
    // admission is too late after its receipt stamp (signatures stay within their 300 s).
    const late = new ManualClock();
    const nowMs = late.nowMs.bind(late);
    late.nowMs = () => {
      late.advance(RECEIPT_TO_ADMISSION_MAX_MS + 1);
      return nowMs();
    };
    const lagging = await startEdge(ctx, clickhouse, { clock: late });
    try {
      const { collector } = await setup({ mode: 'live' });
      const item = envelope(collector);
      const answer = await sendEnvelopes(lagging, collector, [item]);
      expect(answer.status, answer.text).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
      // Not admitted: the same eventId is new on an edge that admits in time.
      const retry = await sendEnvelopes(edge, collector, [item]);
      expect(retry.body).toMatchObject({ accepted: 1, persisted: 1 });
    } finally {
      await lagging.close();
    }
  });

  it('ships what the log holds on graceful shutdown', async () => {
    const slow = await startEdge(ctx, clickhouse, { ingest: { shipIntervalMs: 10_000 } });
    const { collector } = await setup({ mode: 'live' });
    const started = Date.now();
    expect((await sendEnvelopes(slow, collector, [envelope(collector)])).status).toBe(202);
    expect((await sendEnvelopes(slow, collector, [envelope(collector), envelope(collector)])).status).toBe(202);
    await new Promise((done) => setTimeout(done, 300));
    // Durable in the log, answered, not yet shipped (the next round is 10 s away; countObservations would ship it).
    const unshipped = await clickhouse.query({
      query: `SELECT count() AS n FROM observations WHERE connection_id = '${collector.connectionId}'`,
      format: 'JSONEachRow',
    });
    expect(Number((await unshipped.json<{ n: string }>())[0].n)).toBe(0);
    await slow.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(3);
    // No new connections; a kept-alive one learns that the edge is stopping.
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(slow.server.port, '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    const ready = await fetch(`${slow.url}/readyz`).catch(() => null);
    if (ready) expect(ready.status).toBe(503);
  });
});

describe('shared slots (ingest/offload/sharedSlots.ts)', () => {
  const slotsInUse = async (target: Edge) => {
    const text = await (await fetch(`${target.url}/metrics`)).text();
    return Number(/^ingest_shared_slots_in_use\{[^}]*\} (\d+)/m.exec(text)![1]);
  };

  it('gives every slot back whatever the answer, and serves more batches at once than it has slots', async () => {
    const few = await startEdge(ctx, clickhouse, { ingest: { sharedSlots: 4 } });
    try {
      const { collector } = await setup({ mode: 'live' });
      const item = envelope(collector);
      expect((await sendEnvelopes(few, collector, [item, envelope(collector)])).status).toBe(202);
      const resend = await sendEnvelopes(few, collector, [item, envelope(collector)]);
      expect([resend.status, resend.body?.persisted]).toEqual([202, 1]);
      expect((await sendEnvelopes(few, collector, [envelope(collector), { eventId: 'evt_bad' }])).status).toBe(207);
      expect((await postBatch(few, collector, '{"envelopes": [')).status).toBe(400);
      expect((await sendEnvelopes(few, collector, [envelope(collector)], { signingKey: 'svc_ing_wrong' })).status).toBe(401);
      // Checked, refused by admission as stale, checked again under the re-read binding.
      await bumpCredentialEpoch(ctx.deps.redis, collector.accountId, collector.connectionId);
      expect((await sendEnvelopes(few, collector, [envelope(collector)])).status).toBe(202);
      // A client that goes away in the middle of its body: its slot is taken until then.
      const head = `POST /ingest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
      await rawRequest(
        few.server.port,
        head,
        async (write) => {
          write(Buffer.alloc(100, 0x20));
          await expect.poll(() => slotsInUse(few)).toBe(1);
        },
        0,
      );
      const batches = Array.from({ length: 12 }, () => [envelope(collector), envelope(collector)]);
      const answers = await Promise.all(batches.map((items) => sendEnvelopes(few, collector, items)));
      expect(answers.map((answer) => answer.status)).toEqual(batches.map(() => 202));
      expect(await countObservations(clickhouse, collector.connectionId)).toBe(2 + 1 + 1 + 1 + 24);
      await expect.poll(() => slotsInUse(few)).toBe(0);
    } finally {
      await few.close();
    }
  });
});

describe('health and metrics', () => {
  it('answers /healthz, /readyz and unknown routes', async () => {
    expect((await fetch(`${edge.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${edge.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', postgres: true, redis: true, clickhouse: true });
    const unknown = await fetch(`${edge.url}/v1/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'not_found' });
    expect((await fetch(`${edge.url}/ingest`)).status).toBe(404);
  });

  it('exports requests by status, envelopes by result and the latency and batch-size histograms', async () => {
    const { collector } = await setup();
    const item = envelope(collector);
    await sendEnvelopes(edge, collector, [item, envelope(collector, { eventType: '' })]);
    await sendEnvelopes(edge, collector, [item]);
    await edge.shipped();
    const text = await (await fetch(`${edge.url}/metrics`)).text();
    expect(text).toMatch(/^ingest_requests_total\{route="ingest",status="207",process="ingest-test"\} \d+/m);
    expect(text).toMatch(/^ingest_requests_total\{route="ingest",status="202",process="ingest-test"\} \d+/m);
    for (const result of ['accepted', 'rejected', 'duplicate'])
      expect(text).toMatch(new RegExp(`^ingest_envelopes_total\\{result="${result}"[^}]*\\} [1-9]`, 'm'));
    for (const name of [
      'ingest_admission_duration_seconds_count',
      'ingest_insert_duration_seconds_count',
      'ingest_insert_rows_count',
      'ingest_request_duration_seconds_count',
    ]) {
      expect(text).toMatch(new RegExp(`^${name}\\{[^}]*\\} [1-9]`, 'm'));
    }
    for (const stage of ['check', 'log', 'commit'])
      expect(text).toMatch(new RegExp(`^ingest_stage_duration_seconds_count\\{[^}]*stage="${stage}"[^}]*\\} [1-9]`, 'm'));
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});

describe('service clock', () => {
  it('follows the shared test clock (ENABLE_TEST_CLOCK=1) for the signature window', async () => {
    const shared = await startEdge(ctx, clickhouse, { clock: 'shared' });
    const { collector } = await setup();
    const realNow = Math.floor(Date.now() / 1000);
    await advanceTestClock(ctx.deps.redis, 600_000);
    try {
      const stale = await sendEnvelopes(shared, collector, [envelope(collector)], { t: realNow });
      expect(stale.body).toEqual({ error: 'unauthenticated', reason: 'stale' });
      expect((await sendEnvelopes(shared, collector, [envelope(collector)], { t: realNow + 600 })).status).toBe(202);
    } finally {
      await advanceTestClock(ctx.deps.redis, -600_000);
      await shared.close();
    }
    expect((await sendEnvelopes(edge, collector, [envelope(collector)], { t: realNow })).status).toBe(202);
  });
});

describe('signature covers the exact bytes', () => {
  it('accepts any serialisation as long as the signed string is what is sent', async () => {
    const { collector } = await setup();
    const spaced = JSON.stringify({ envelopes: [envelope(collector), envelope(collector)] }, null, 2);
    expect((await postBatch(edge, collector, spaced)).status).toBe(202);
    const unicode = JSON.stringify({ envelopes: [envelope(collector, { eventType: 'bestellung.erstellt' })] }).replace(
      '"bestellung',
      '"\\u0062estellung',
    );
    expect((await postBatch(edge, collector, unicode)).status).toBe(202);
    expect(await countObservations(clickhouse, collector.connectionId)).toBe(3);
    expect(newEventId()).toMatch(/^evt_/);
  });
});
