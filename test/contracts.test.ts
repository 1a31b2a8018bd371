import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { buildApp } from '../management/app.js';
import { insertApiKey } from '../management/apiKeys/apiKeyStore.js';
import type { WorkspaceScope } from '../management/auth/scopes.js';
import { encodeContractCursor } from '../management/contracts/contractCursor.js';
import { encodeInventoryCursor } from '../management/integrations/inventoryCursor.js';
import { setWritePause } from '../management/maintenance.js';
import { importOpenApi } from '../shared/contracts/index.js';
import { fingerprint } from '../shared/fingerprint.js';
import { asImported, declaredPayloads } from './helpers/corpusPayloads.js';
import { bootstrapWorkspace, callWithKey, callWithSession, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration, insertIntegrationRow, insertSlotConnection } from './helpers/integrations.js';
import {
  activateOk,
  activateUrl,
  activateVersion,
  contractState,
  contractsUrl,
  contractUrl,
  CORPUS_DIR,
  loadCorpusDocument,
  openApiRegistration,
  ordersOpenApi,
  queueRegistration,
  refundWebhooks,
  registerDraft,
  registerVersion,
} from './helpers/contracts.js';

let ctx: TestContext;
let boot: BootstrapResult;
let stranger: BootstrapResult;
beforeAll(async () => {
  ctx = await createTestContext();
  boot = await bootstrapWorkspace(ctx);
  stranger = await bootstrapWorkspace(ctx);
});
afterAll(async () => {
  await ctx.close();
});

type Protocol = 'http-api' | 'http-webhook' | 'scheduled-feed' | 'queue';

async function newConnection(
  owner: BootstrapResult = boot,
  protocol: Protocol = 'http-api',
  direction: 'inbound' | 'outbound' = 'outbound',
): Promise<string> {
  return (await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox', protocol, direction, name: `Contracts ${protocol}` }))
    .integration.connectionId;
}

/** A second key of the same workspace with exactly these scopes. */
async function keyWith(owner: BootstrapResult, scopes: WorkspaceScope[]): Promise<string> {
  return (
    await insertApiKey(ctx.deps.pool, {
      workspaceId: owner.workspace.id,
      scopes,
      expiresAt: null,
      createdBy: 'test',
      now: ctx.deps.clock.now(),
    })
  ).key;
}

const key = () => boot.apiKey.key;
const list = (apiKey: string | null, connectionId: string, query = '') =>
  callWithKey(ctx, apiKey, 'GET', contractsUrl(connectionId) + query);
const read = (apiKey: string, connectionId: string, versionId: string) =>
  callWithKey(ctx, apiKey, 'GET', contractUrl(connectionId, versionId));

/** Proves that a failed request changed nothing contract-related on the connection. */
async function expectUnchanged(
  connectionId: string,
  run: () => Promise<LightMyRequestResponse>,
  status: number,
  body: unknown,
): Promise<LightMyRequestResponse> {
  const before = await contractState(ctx, connectionId);
  const res = await run();
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual(body);
  expect(await contractState(ctx, connectionId)).toEqual(before);
  return res;
}

describe('POST /v1/integrations/{integrationId}/contracts', () => {
  it('registers an OpenAPI draft: 201 registration form, skipped payloads, committed connectionRevision, audit, no analysis', async () => {
    const connectionId = await newConnection();
    const before = await contractState(ctx, connectionId);
    const document = ordersOpenApi();
    const res = await registerVersion(
      ctx,
      key(),
      connectionId,
      openApiRegistration('2024-06-01', document, { expectedScope: { direction: 'outbound', protocol: 'http-api' } }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const after = await contractState(ctx, connectionId);
    const body = res.json();
    expect(body).toEqual({
      contract: {
        id: expect.stringMatching(/^cv_[0-9a-z]{26}$/),
        declaredVersion: '2024-06-01',
        fingerprint: fingerprint(document),
        importedFrom: 'openapi-3.1',
        lifecycleStatus: 'draft',
        operationCount: 3,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
      // The 400 payload is an operation whose `oneOf` is left unchecked (00-decisions §7).
      skipped: [
        { pointer: '/paths/~1v1~1orders/post/responses/400/content/application~1json/schema/oneOf', reason: 'composition keyword oneOf' },
      ],
      connectionRevision: after.revision,
    });
    expect(after.revision).not.toBe(before.revision);
    expect(BigInt(after.revision)).toBeGreaterThan(BigInt(before.revision));
    expect(after).toMatchObject({
      versions: 1,
      operations: 3,
      activations: 0,
      audits: 1,
      outbox: 0,
      analysisRevision: 0,
      activeContractVersionId: null,
    });

    const stored = await ctx.deps.pool.query('SELECT * FROM contract_versions WHERE id = $1', [body.contract.id]);
    expect(stored.rows[0]).toMatchObject({
      connection_id: connectionId,
      workspace_id: boot.workspace.id,
      format: 'openapi',
      imported_from: 'openapi-3.1',
      document,
      operation_count: 3,
      lifecycle_status: 'draft',
      registered_from_revision: before.revision,
      connection_revision: after.revision,
      api_key_id: boot.apiKey.id,
      activated_at: null,
      superseded_at: null,
    });
    const operations = await ctx.deps.pool.query(
      'SELECT operation_key, direction, protocol, method, payload_location, status_selector, unchecked, position FROM contract_operations WHERE contract_version_id = $1 ORDER BY position',
      [body.contract.id],
    );
    expect(operations.rows).toEqual([
      {
        operation_key: 'POST /v1/orders:request:default',
        direction: 'outbound',
        protocol: 'http-api',
        method: 'POST',
        payload_location: 'request',
        status_selector: 'default',
        unchecked: [],
        position: 0,
      },
      {
        operation_key: 'POST /v1/orders:response:201',
        direction: 'outbound',
        protocol: 'http-api',
        method: 'POST',
        payload_location: 'response',
        status_selector: '201',
        unchecked: [],
        position: 1,
      },
      {
        operation_key: 'POST /v1/orders:response:400',
        direction: 'outbound',
        protocol: 'http-api',
        method: 'POST',
        payload_location: 'response',
        status_selector: '400',
        unchecked: [
          {
            pointer: '/paths/~1v1~1orders/post/responses/400/content/application~1json/schema/oneOf',
            schemaPointer: '',
            reason: 'composition keyword oneOf',
          },
        ],
        position: 2,
      },
    ]);
    const audit = await ctx.deps.pool.query(
      "SELECT actor_type, actor_id, target_id, metadata FROM audit_events WHERE action = 'contract.register' AND target_id = $1",
      [body.contract.id],
    );
    expect(audit.rows).toEqual([
      {
        actor_type: 'api_key',
        actor_id: boot.apiKey.id,
        target_id: body.contract.id,
        metadata: {
          connectionId,
          declaredVersion: '2024-06-01',
          format: 'openapi',
          fingerprint: fingerprint(document),
          operationCount: 3,
          connectionRevision: after.revision,
        },
      },
    ]);
  });

  it('registers a real corpus document (OAI petstore 3.0)', async () => {
    const connectionId = await newConnection();
    const document = loadCorpusDocument('oai-petstore-v3.0.json');
    const body = await registerDraft(ctx, key(), connectionId, openApiRegistration('petstore', document));
    expect(body.contract).toMatchObject({ importedFrom: 'openapi-3.0', operationCount: 7, fingerprint: fingerprint(document) });
    expect(body.skipped).toEqual([]);
    const full = (await read(key(), connectionId, body.contract.id)).json().contract;
    // POST /pets answers 201 without content: an operation with nothing to check (00-decisions §7).
    expect(
      full.operations.map((op: { operationKey: string; schema: unknown; unchecked: unknown[] }) => [
        op.operationKey,
        op.unchecked.length,
        Object.keys(op.schema as object).length > 0,
      ]),
    ).toEqual([
      ['GET /pets/{petId}:response:200', 0, true],
      ['GET /pets/{petId}:response:default', 0, true],
      ['GET /pets:response:200', 0, true],
      ['GET /pets:response:default', 0, true],
      ['POST /pets:request:default', 0, true],
      ['POST /pets:response:201', 0, false],
      ['POST /pets:response:default', 0, true],
    ]);
  });

  it('registers every corpus document that declares an operation, importing at least 95 % of its JSON payloads (issue 14)', async () => {
    const manifest: { file: string; paths: number; webhooks: number }[] = JSON.parse(readFileSync(`${CORPUS_DIR}manifest.json`, 'utf8'));
    expect(manifest.length).toBe(26);
    const rows: string[] = [];
    let payloads = 0;
    let imported = 0;
    for (const entry of manifest) {
      const protocols = [...(entry.paths > 0 ? (['http-api'] as const) : []), ...(entry.webhooks > 0 ? (['http-webhook'] as const) : [])];
      expect(protocols.length, entry.file).toBeGreaterThan(0);
      for (const protocol of protocols) {
        const connectionId = await newConnection(boot, protocol, protocol === 'http-api' ? 'outbound' : 'inbound');
        const document = loadCorpusDocument(entry.file);
        const res = await registerVersion(ctx, key(), connectionId, openApiRegistration(entry.file, document));
        expect(res.statusCode, `${entry.file} ${protocol}: ${res.body.slice(0, 300)}`).toBe(201);
        const body = res.json();
        const expected = importOpenApi(document, protocol);
        expect(body.contract, entry.file).toMatchObject({
          fingerprint: fingerprint(document),
          operationCount: expected.operations.length,
          importedFrom: expected.openapiVersion === '2.0' ? 'swagger-2.0' : `openapi-${expected.openapiVersion.slice(0, 3)}`,
        });
        expect(body.skipped, entry.file).toEqual(expected.skipped);
        const full = (await read(key(), connectionId, body.contract.id)).json().contract;
        type Read = {
          operationKey: string;
          fingerprint: string;
          schema: unknown;
          unchecked: { pointer: string; schemaPointer: string; reason: string }[];
        };
        expect(
          full.operations.map((op: Read) => [op.operationKey, op.fingerprint, op.schema, op.unchecked]),
          entry.file,
        ).toEqual(expected.operations.map((op) => [op.operationKey, op.fingerprint, op.schema, op.unchecked]));
        // Every unchecked sub-schema the read shows is documented in the registration's `skipped`.
        const documented = new Set(body.skipped.map((item: { pointer: string; reason: string }) => `${item.pointer} ${item.reason}`));
        for (const op of full.operations as Read[])
          for (const item of op.unchecked)
            expect(documented.has(`${item.pointer} ${item.reason}`), `${entry.file} ${item.pointer}`).toBe(true);
        const keys = new Set(full.operations.map((op: Read) => op.operationKey));
        const json = declaredPayloads(asImported(loadCorpusDocument(entry.file)), protocol === 'http-api' ? 'paths' : 'webhooks')
          .filter((payload) => payload.json)
          .map((payload) => payload.key);
        const found = json.filter((payload) => keys.has(payload)).length;
        payloads += json.length;
        imported += found;
        const unchecked = (full.operations as Read[]).reduce((sum, op) => sum + op.unchecked.length, 0);
        rows.push(
          `${entry.file.padEnd(40)} ${protocol.padEnd(12)} ${String(json.length).padStart(5)} ${String(found).padStart(8)} ${String(full.operations.length).padStart(10)} ${String(unchecked).padStart(9)}`,
        );
        const stored = await ctx.deps.pool.query('SELECT document FROM contract_versions WHERE id = $1', [body.contract.id]);
        expect(fingerprint(stored.rows[0].document), entry.file).toBe(fingerprint(document));
      }
    }
    console.log(
      [
        `${'document'.padEnd(40)} ${'protocol'.padEnd(12)} ${'JSON'.padStart(5)} ${'imported'.padStart(8)} ${'operations'.padStart(10)} ${'unchecked'.padStart(9)}`,
        ...rows,
        `JSON payloads imported as operations: ${imported} of ${payloads} (${((100 * imported) / payloads).toFixed(1)} %)`,
      ].join('\n'),
    );
    expect(payloads).toBeGreaterThan(2000);
    expect(imported / payloads).toBeGreaterThanOrEqual(0.95);
  });

  it('imports Swagger 2.0 corpus documents through their OpenAPI 3.0 conversion, keeping the document sent', async () => {
    const connectionId = await newConnection();
    for (const file of ['nyt-books-swagger-v2.0.json', 'oai-uber-swagger-v2.0.json', 'slack-web-swagger-v2.0.json']) {
      const document = loadCorpusDocument(file);
      const body = await registerDraft(ctx, key(), connectionId, openApiRegistration(file, document));
      const stored = await ctx.deps.pool.query('SELECT document, imported_from, operation_count FROM contract_versions WHERE id = $1', [
        body.contract.id,
      ]);
      expect(stored.rows[0].imported_from, file).toBe('swagger-2.0');
      expect(stored.rows[0].operation_count, file).toBeGreaterThan(0);
      expect(fingerprint(stored.rows[0].document), file).toBe(fingerprint(loadCorpusDocument(file)));
    }
  });

  it('reads webhook operations from `webhooks` for an http-webhook Integration', async () => {
    const connectionId = await newConnection(boot, 'http-webhook', 'inbound');
    const body = await registerDraft(ctx, key(), connectionId, openApiRegistration('hooks-1', refundWebhooks()));
    const full = (await read(key(), connectionId, body.contract.id)).json().contract;
    expect(full.operations).toEqual([
      expect.objectContaining({
        operationKey: 'POST refund.created:message:default',
        direction: 'inbound',
        protocol: 'http-webhook',
        eventType: 'refund.created',
        payloadLocation: 'message',
      }),
    ]);
  });

  it('registers an operation-bound JSON Schema for queue and scheduled-feed, and for an http-api operation', async () => {
    for (const protocol of ['queue', 'scheduled-feed'] as const) {
      const connectionId = await newConnection(boot, protocol, 'inbound');
      const body = await registerDraft(ctx, key(), connectionId, queueRegistration('q1'));
      expect(body.contract).toMatchObject({ importedFrom: 'json-schema', operationCount: 1 });
      const full = (await read(key(), connectionId, body.contract.id)).json().contract;
      expect(full.operations).toEqual([
        {
          id: expect.stringMatching(/^cop_[0-9a-z]{26}$/),
          operationKey: 'POST orders.created:message:default',
          direction: 'inbound',
          protocol,
          method: 'POST',
          routeTemplate: 'orders.created',
          basePaths: [],
          eventType: null,
          payloadLocation: 'message',
          statusSelector: 'default',
          fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
          schema: expect.objectContaining({ type: 'object', required: ['orderId'] }),
          unchecked: [],
        },
      ]);
    }
    const http = await newConnection();
    const body = await registerDraft(ctx, key(), http, {
      declaredVersion: 'one-op',
      format: 'json-schema',
      document: { type: 'object', properties: { id: { type: 'string' } } },
      operation: { method: 'GET', routeTemplate: '/v1/orders/{id}', payloadLocation: 'response', statusSelector: '2xx' },
    });
    const full = (await read(key(), http, body.contract.id)).json().contract;
    expect(full.operations[0]).toMatchObject({ operationKey: 'GET /v1/orders/{id}:response:2XX', statusSelector: '2XX' });
  });

  it('answers an identical retry with the same draft: 201, no new version, no audit, the original connectionRevision', async () => {
    const connectionId = await newConnection();
    const revision = (await contractState(ctx, connectionId)).revision;
    const first = await registerDraft(
      ctx,
      key(),
      connectionId,
      openApiRegistration('v1', ordersOpenApi(), { expectedConnectionRevision: revision }),
    );
    const before = await contractState(ctx, connectionId);
    // The same request again (its expectation is now the pre-registration revision), without it,
    // and with the current revision: each answers the original registration and writes nothing.
    for (const extra of [
      { expectedConnectionRevision: revision },
      {},
      { expectedConnectionRevision: first.connectionRevision },
      { expectedScope: { direction: 'outbound', protocol: 'http-api' } },
    ]) {
      const res = await registerVersion(ctx, key(), connectionId, openApiRegistration('v1', ordersOpenApi(), extra));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toEqual(first);
    }
    expect(await contractState(ctx, connectionId)).toEqual(before);
  });

  it('answers a retry whose expectation is neither the original nor the current revision with connection_configuration_changed', async () => {
    const connectionId = await newConnection();
    const start = (await contractState(ctx, connectionId)).revision;
    await registerDraft(ctx, key(), connectionId, openApiRegistration('other'));
    const middle = (await contractState(ctx, connectionId)).revision;
    await registerDraft(ctx, key(), connectionId, openApiRegistration('v1', ordersOpenApi(), { expectedConnectionRevision: middle }));
    expect(start).not.toBe(middle);
    await expectUnchanged(
      connectionId,
      () => registerVersion(ctx, key(), connectionId, openApiRegistration('v1', ordersOpenApi(), { expectedConnectionRevision: start })),
      409,
      { error: 'connection_configuration_changed' },
    );
  });

  it('refuses a changed document, format or selector under an existing label with contract_version_already_exists', async () => {
    const connectionId = await newConnection(boot, 'queue', 'inbound');
    await registerDraft(ctx, key(), connectionId, queueRegistration('v1'));
    const changed = [
      queueRegistration('v1', { document: { type: 'object', properties: { orderId: { type: 'integer' } } } }),
      queueRegistration('v1', {
        operation: { method: 'POST', routeTemplate: 'orders.updated', payloadLocation: 'message', statusSelector: 'default' },
      }),
      // Same schema, only an annotation differs: the document fingerprint differs.
      queueRegistration('v1', {
        document: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { orderId: { type: 'string', description: 'x' } },
          required: ['orderId'],
        },
      }),
    ];
    for (const body of changed) {
      await expectUnchanged(connectionId, () => registerVersion(ctx, key(), connectionId, body), 409, {
        error: 'contract_version_already_exists',
      });
    }
  });

  it('refuses an expectedScope that differs from the Integration with integration_scope_mismatch, writing nothing', async () => {
    const connectionId = await newConnection();
    for (const expectedScope of [
      { direction: 'inbound', protocol: 'http-api' },
      { direction: 'outbound', protocol: 'http-webhook' },
    ]) {
      await expectUnchanged(
        connectionId,
        () => registerVersion(ctx, key(), connectionId, openApiRegistration('v1', ordersOpenApi(), { expectedScope })),
        409,
        { error: 'integration_scope_mismatch' },
      );
    }
    // Checked before the import: even a document that would be refused gets the scope answer.
    await expectUnchanged(
      connectionId,
      () =>
        registerVersion(ctx, key(), connectionId, {
          ...queueRegistration('v1'),
          expectedScope: { direction: 'inbound', protocol: 'queue' },
        }),
      409,
      { error: 'integration_scope_mismatch' },
    );
  });

  it('checks expectedConnectionRevision under the lock: stale → connection_configuration_changed and no draft; current → 201', async () => {
    const connectionId = await newConnection();
    const current = (await contractState(ctx, connectionId)).revision;
    await ctx.deps.pool.query("UPDATE connections SET revision = nextval('revision_seq')::text WHERE id = $1", [connectionId]);
    for (const stale of [current, 'not-a-revision']) {
      await expectUnchanged(
        connectionId,
        () => registerVersion(ctx, key(), connectionId, openApiRegistration('v1', ordersOpenApi(), { expectedConnectionRevision: stale })),
        409,
        { error: 'connection_configuration_changed' },
      );
    }
    const now = (await contractState(ctx, connectionId)).revision;
    const ok = await registerDraft(
      ctx,
      key(),
      connectionId,
      openApiRegistration('v1', ordersOpenApi(), { expectedConnectionRevision: now }),
    );
    expect(ok.connectionRevision).toBe((await contractState(ctx, connectionId)).revision);
    expect(ok.connectionRevision).not.toBe(now);
  });

  it('answers 400 invalid_contract with a reason and pointers for documents, selectors and subsets it cannot import', async () => {
    const http = await newConnection();
    const queue = await newConnection(boot, 'queue', 'inbound');
    const deep: Record<string, unknown> = { type: 'object' };
    let node = deep;
    for (let i = 0; i < 300; i++) {
      const child: Record<string, unknown> = { type: 'object' };
      node.properties = { a: child };
      node = child;
    }
    const cases: [string, string, Record<string, unknown>, { reason?: RegExp; pointers?: string[] }][] = [
      ['OpenAPI for a queue Integration', queue, openApiRegistration('v1'), { reason: /http-api and http-webhook/, pointers: [] }],
      [
        'json-schema without operation',
        queue,
        { declaredVersion: 'v1', format: 'json-schema', document: { type: 'object' } },
        { reason: /operation selector/ },
      ],
      [
        'openapi with an operation',
        http,
        openApiRegistration('v1', ordersOpenApi(), {
          operation: { method: 'POST', routeTemplate: '/x', payloadLocation: 'request', statusSelector: 'default' },
        }),
        { reason: /only with format json-schema/ },
      ],
      [
        'Swagger 1.2',
        http,
        openApiRegistration('v1', { swagger: '1.2', info: { title: 'x', version: '1' }, paths: {} }),
        { reason: /Swagger "?1\.2"? documents are not supported/, pointers: ['/swagger'] },
      ],
      [
        'http-api document without paths',
        http,
        openApiRegistration('v1', { openapi: '3.0.3', info: { title: 'x', version: '1' } }),
        { pointers: [''] },
      ],
      [
        'no operation at all',
        http,
        openApiRegistration('v1', { openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: { '/a': { summary: 'no methods' } } }),
        { reason: /no importable operations/, pointers: ['/paths'] },
      ],
      [
        'composition keyword in a JSON Schema',
        queue,
        queueRegistration('v1', { document: { anyOf: [{ type: 'string' }] } }),
        { pointers: ['/anyOf'] },
      ],
      [
        'remote reference in a JSON Schema',
        queue,
        queueRegistration('v1', { document: { $ref: 'https://example.com/order.json' } }),
        { pointers: ['/$ref'] },
      ],
      [
        'selector with a method the protocol does not use',
        queue,
        queueRegistration('v1', {
          operation: { method: 'GET', routeTemplate: 'orders', payloadLocation: 'message', statusSelector: 'default' },
        }),
        { reason: /operation\.method/ },
      ],
      [
        'selector with a bad status',
        queue,
        queueRegistration('v1', {
          operation: { method: 'POST', routeTemplate: 'orders', payloadLocation: 'message', statusSelector: '999' },
        }),
        { reason: /statusSelector/ },
      ],
      [
        'U+0000 in the document',
        queue,
        queueRegistration('v1', { document: { type: 'object', properties: { 'a\u0000b': { type: 'string' } } } }),
        { pointers: ['/properties/a\u0000b'] },
      ],
      ['nesting deeper than 256 levels', queue, queueRegistration('v1', { document: deep }), { reason: /deeper than 256/ }],
    ];
    for (const [label, connectionId, body, expected] of cases) {
      const before = await contractState(ctx, connectionId);
      const res = await registerVersion(ctx, key(), connectionId, body);
      expect(res.statusCode, `${label}: ${res.body}`).toBe(400);
      const answer = res.json();
      expect(answer.error, label).toBe('invalid_contract');
      expect(answer.reason, label).toEqual(expect.any(String));
      expect(answer.pointers, label).toEqual(expect.any(Array));
      if (expected.reason) expect(answer.reason, label).toMatch(expected.reason);
      if (expected.pointers) expect(answer.pointers, label).toEqual(expected.pointers);
      expect(await contractState(ctx, connectionId), label).toEqual(before);
    }
  });

  it('answers 400 invalid_contract for unknown fields, missing or mistyped members and labels outside 1–120 characters', async () => {
    const connectionId = await newConnection();
    const base = openApiRegistration('v1');
    const bodies: unknown[] = [
      { ...base, tenantId: 'ten_x' },
      { ...base, mode: 'live' },
      { format: 'openapi', document: ordersOpenApi() },
      { declaredVersion: 'v1', document: ordersOpenApi() },
      { declaredVersion: 'v1', format: 'openapi' },
      { ...base, declaredVersion: '' },
      { ...base, declaredVersion: 'x'.repeat(121) },
      { ...base, declaredVersion: 'line\nbreak' },
      { ...base, declaredVersion: 7 },
      { ...base, format: 'swagger' },
      { ...base, document: [ordersOpenApi()] },
      { ...base, document: 'openapi: 3.1.0' },
      { ...base, expectedScope: { direction: 'outbound' } },
      { ...base, expectedScope: { direction: 'outbound', protocol: 'http-api', mode: 'live' } },
      { ...base, expectedScope: { direction: 'sideways', protocol: 'http-api' } },
      { ...base, expectedConnectionRevision: 12 },
      queueRegistration('v1', {
        operation: { method: 'POST', routeTemplate: 'x', payloadLocation: 'message', statusSelector: 'default', extra: 1 },
      }),
      queueRegistration('v1', { operation: { method: 'POST', routeTemplate: 'x', payloadLocation: 'message' } }),
      [base],
    ];
    for (const body of bodies) {
      await expectUnchanged(connectionId, () => registerVersion(ctx, key(), connectionId, body), 400, { error: 'invalid_contract' });
    }
    // The bounds themselves are accepted: 1 and 120 characters (code points).
    await registerDraft(ctx, key(), connectionId, openApiRegistration('x'));
    await registerDraft(ctx, key(), connectionId, openApiRegistration('é'.repeat(120)));
  });

  it('answers 404 integration_not_found for wint_, malformed, unknown, deleted and foreign ids, writing nothing', async () => {
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    const foreign = await newConnection(stranger);
    const deleted = await newConnection();
    await ctx.deps.pool.query('UPDATE connections SET deleted_at = now() WHERE id = $1', [deleted]);
    for (const id of [
      created.integration.id,
      'int_00000000000000000000000000',
      'int_x',
      created.integration.connectionId.toUpperCase(),
      foreign,
      deleted,
      created.collectorConfiguration.connectionKey,
    ]) {
      const res = await registerVersion(ctx, key(), id, openApiRegistration('v1'));
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'integration_not_found' });
    }
    expect((await contractState(ctx, foreign)).versions).toBe(0);
    expect((await contractState(ctx, deleted)).versions).toBe(0);
  });

  it('needs contracts:write (403 before 400) and a workspace API key (401 without, with an ingest token, with a session)', async () => {
    const connectionId = await newConnection();
    const readOnly = await keyWith(boot, ['contracts:read', 'contracts:activate', 'integrations:manage']);
    await expectUnchanged(connectionId, () => registerVersion(ctx, readOnly, connectionId, openApiRegistration('v1')), 403, {
      error: 'insufficient_scope',
    });
    await expectUnchanged(connectionId, () => registerVersion(ctx, readOnly, connectionId, { junk: true }), 403, {
      error: 'insufficient_scope',
    });
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'live' });
    const unauthenticated = [
      () => registerVersion(ctx, null, connectionId, openApiRegistration('v1')),
      () => registerVersion(ctx, created.collectorConfiguration.ingestToken, connectionId, openApiRegistration('v1')),
      () => callWithSession(ctx, boot.sessionToken, 'POST', contractsUrl(connectionId), { body: openApiRegistration('v1') }),
    ];
    for (const run of unauthenticated) {
      const res = await expectUnchanged(connectionId, run, 401, expect.objectContaining({ error: 'unauthenticated' }));
      expect(res.statusCode).toBe(401);
    }
  });

  it('answers 409 workspace_modes_unavailable in a legacy workspace', async () => {
    const legacy = await bootstrapWorkspace(ctx, { legacy: true });
    const integrationId = await insertIntegrationRow(ctx, legacy.workspace.id);
    const { connectionId } = await insertSlotConnection(ctx, { workspaceId: legacy.workspace.id, integrationId, category: 'production' });
    await expectUnchanged(
      connectionId,
      () => registerVersion(ctx, legacy.apiKey.key, connectionId, openApiRegistration('v1', refundWebhooks())),
      409,
      { error: 'workspace_modes_unavailable' },
    );
    expect((await list(legacy.apiKey.key, connectionId)).json()).toEqual({ error: 'workspace_modes_unavailable' });
    expect((await read(legacy.apiKey.key, connectionId, 'cv_01jx0000000000000000000000')).json()).toEqual({
      error: 'workspace_modes_unavailable',
    });
    const activation = await activateVersion(ctx, legacy.apiKey.key, connectionId, 'cv_01jx0000000000000000000000', {
      expectedActiveContractVersionId: null,
      reason: 'promote',
    });
    expect(activation.statusCode).toBe(409);
    expect(activation.json()).toEqual({ error: 'workspace_modes_unavailable' });
  });

  it('creates one version for concurrent identical registrations, and refuses the loser of a conflicting race', async () => {
    const connectionId = await newConnection();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        registerVersion(ctx, key(), connectionId, openApiRegistration('race', loadCorpusDocument('oai-petstore-v3.0.json'))),
      ),
    );
    expect(results.map((res) => res.statusCode)).toEqual(Array(6).fill(201));
    expect(new Set(results.map((res) => res.json().contract.id)).size).toBe(1);
    const state = await contractState(ctx, connectionId);
    expect(state).toMatchObject({ versions: 1, audits: 1 });

    const mixed = await Promise.all(
      [0, 1, 2, 3].map((variant) => registerVersion(ctx, key(), connectionId, openApiRegistration('mixed', ordersOpenApi(variant)))),
    );
    expect(mixed.map((res) => res.statusCode).sort()).toEqual([201, 409, 409, 409]);
    expect((await contractState(ctx, connectionId)).versions).toBe(2);
  });

  it('answers 503 mode_cutover_write_paused while writes are paused, writing nothing', async () => {
    const connectionId = await newConnection();
    await setWritePause(ctx.deps.redis, true);
    try {
      const res = await expectUnchanged(connectionId, () => registerVersion(ctx, key(), connectionId, openApiRegistration('v1')), 503, {
        error: 'mode_cutover_write_paused',
      });
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });
});

describe('GET /v1/integrations/{integrationId}/contracts', () => {
  it('lists an empty connection', async () => {
    const connectionId = await newConnection();
    const res = await list(key(), connectionId);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      integration: { id: connectionId, name: 'Contracts http-api' },
      activeContractVersionId: null,
      contracts: [],
      nextCursor: null,
    });
  });

  it('lists newest first (createdAt, then id, descending) with full versions and pages with an opaque cursor', async () => {
    const connectionId = await newConnection();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await registerDraft(ctx, key(), connectionId, openApiRegistration(`v${i}`, ordersOpenApi(i)))).contract.id);
    // Two versions share a creation time: the id breaks the tie.
    await ctx.deps.pool.query(
      'UPDATE contract_versions SET created_at = (SELECT created_at FROM contract_versions WHERE id = $1) WHERE id = $2',
      [ids[3], ids[2]],
    );
    await activateOk(ctx, key(), connectionId, ids[1], { expectedActiveContractVersionId: null, reason: 'promote' });
    const expectedOrder = [ids[4], ids[3], ids[2], ids[1], ids[0]];

    const pages: { contracts: { id: string }[]; nextCursor: string | null; activeContractVersionId: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await list(key(), connectionId, query);
      expect(res.statusCode, res.body).toBe(200);
      pages.push(res.json());
      cursor = pages[pages.length - 1].nextCursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages.map((page) => page.contracts.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((page) => page.contracts.map((contract) => contract.id))).toEqual(expectedOrder);
    expect(pages.every((page) => page.activeContractVersionId === ids[1])).toBe(true);

    const all = (await list(key(), connectionId, '?limit=100')).json();
    expect(all.nextCursor).toBeNull();
    const active = all.contracts.find((contract: { id: string }) => contract.id === ids[1]);
    expect(active).toEqual({
      id: ids[1],
      declaredVersion: 'v1',
      fingerprint: fingerprint(ordersOpenApi(1)),
      importedFrom: 'openapi-3.1',
      lifecycleStatus: 'active',
      activatedAt: expect.stringMatching(/Z$/),
      supersededAt: null,
      createdAt: expect.stringMatching(/Z$/),
      operations: [
        expect.objectContaining({ operationKey: 'POST /v1/orders:request:default' }),
        expect.objectContaining({ operationKey: 'POST /v1/orders:response:201' }),
        expect.objectContaining({ operationKey: 'POST /v1/orders:response:400' }),
      ],
    });
    expect(all.contracts[0].operations[1]).toEqual({
      id: expect.stringMatching(/^cop_/),
      operationKey: 'POST /v1/orders:response:201',
      direction: 'outbound',
      protocol: 'http-api',
      method: 'POST',
      routeTemplate: '/v1/orders',
      basePaths: [],
      eventType: null,
      payloadLocation: 'response',
      statusSelector: '201',
      fingerprint: expect.stringMatching(/^sha256:/),
      schema: expect.objectContaining({ $ref: expect.any(String), $defs: expect.any(Object) }),
      unchecked: [],
    });
    // Issue 14, item 5: the read shows what activation will not watch.
    expect(all.contracts[0].operations[2]).toEqual({
      id: expect.stringMatching(/^cop_/),
      operationKey: 'POST /v1/orders:response:400',
      direction: 'outbound',
      protocol: 'http-api',
      method: 'POST',
      routeTemplate: '/v1/orders',
      basePaths: [],
      eventType: null,
      payloadLocation: 'response',
      statusSelector: '400',
      fingerprint: fingerprint({}),
      schema: {},
      unchecked: [
        {
          pointer: '/paths/~1v1~1orders/post/responses/400/content/application~1json/schema/oneOf',
          schemaPointer: '',
          reason: 'composition keyword oneOf',
        },
      ],
    });
    // Nothing internal is serialised.
    for (const secret of ['content_signature', 'contentSignature', 'document', 'registered', boot.apiKey.id])
      expect(JSON.stringify(all)).not.toContain(secret);
  });

  it('defaults to 25 per page', async () => {
    const connectionId = await newConnection(boot, 'queue', 'inbound');
    for (let i = 0; i < 26; i++) await registerDraft(ctx, key(), connectionId, queueRegistration(`v${i}`));
    const first = (await list(key(), connectionId)).json();
    expect(first.contracts).toHaveLength(25);
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = (await list(key(), connectionId, `?cursor=${encodeURIComponent(first.nextCursor)}`)).json();
    expect(rest.contracts.map((c: { declaredVersion: string }) => c.declaredVersion)).toEqual(['v0']);
    expect(rest.nextCursor).toBeNull();
  });

  it('answers 400 invalid_contract_query for unknown parameters and limits outside 1–100', async () => {
    const connectionId = await newConnection();
    for (const query of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?limit=',
      '?limit=1.5',
      '?limit=-1',
      '?limit=01',
      '?limit=1&limit=2',
      '?view=canonical',
      '?environmentId=env_x',
      '?limit=10&extra=1',
    ]) {
      const res = await list(key(), connectionId, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toEqual({ error: 'invalid_contract_query' });
    }
    for (const query of ['?limit=1', '?limit=100', '?limit=25'])
      expect((await list(key(), connectionId, query)).statusCode, query).toBe(200);
  });

  it("answers 400 invalid_contract_cursor for malformed, tampered, foreign and other lists' cursors", async () => {
    const connectionId = await newConnection();
    const sibling = await newConnection();
    const foreign = await newConnection(stranger);
    for (const id of [connectionId, sibling]) for (let i = 0; i < 2; i++) await registerDraft(ctx, key(), id, openApiRegistration(`v${i}`));
    for (let i = 0; i < 2; i++) await registerDraft(ctx, stranger.apiKey.key, foreign, openApiRegistration(`v${i}`));
    const cursor = (await list(key(), connectionId, '?limit=1')).json().nextCursor as string;
    const siblingCursor = (await list(key(), sibling, '?limit=1')).json().nextCursor as string;
    const foreignCursor = (await list(stranger.apiKey.key, foreign, '?limit=1')).json().nextCursor as string;
    const [payload, mac] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const reencode = (value: unknown) => `${Buffer.from(JSON.stringify(value)).toString('base64url')}.${mac}`;
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const secret = ctx.deps.config.secretEncryptionKey;
    const bad: [string, string][] = [
      ['garbage', 'abc'],
      ['empty', ''],
      ['another integration of the workspace', siblingCursor],
      ['another workspace', foreignCursor],
      ['tampered payload', reencode({ ...decoded, conn: sibling })],
      ['tampered mac', `${payload}.${flip(mac, 3)}`],
      [
        'signed with another secret',
        encodeContractCursor(Buffer.alloc(32, 9), connectionId, { createdAt: new Date(decoded.at), id: decoded.id }),
      ],
      [
        'an inventory cursor',
        encodeInventoryCursor(secret, {
          view: 'canonical',
          workspaceId: boot.workspace.id,
          environmentId: null,
          afterId: 'wint_00000000000000000000000000',
        }),
      ],
    ];
    for (const [label, value] of bad) {
      const res = await list(key(), connectionId, `?cursor=${encodeURIComponent(value)}`);
      expect(res.statusCode, label).toBe(400);
      expect(res.json(), label).toEqual({ error: 'invalid_contract_cursor' });
    }
    expect((await list(key(), connectionId, `?cursor=${encodeURIComponent(cursor)}`)).json().contracts).toHaveLength(1);
  });

  it('answers 404 integration_not_found for foreign, wint_ and malformed ids; 403 without contracts:read; 401 without a key', async () => {
    const foreign = await newConnection(stranger);
    await registerDraft(ctx, stranger.apiKey.key, foreign, openApiRegistration('secret-label'));
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    for (const id of [foreign, created.integration.id, 'int_0', 'nope']) {
      const res = await list(key(), id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual({ error: 'integration_not_found' });
      expect(res.body).not.toContain('secret-label');
    }
    const writer = await keyWith(boot, ['contracts:write', 'contracts:activate', 'integrations:read']);
    const res = await list(writer, created.integration.connectionId);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'insufficient_scope' });
    expect((await list(writer, created.integration.connectionId, '?limit=0')).json()).toEqual({ error: 'insufficient_scope' });
    expect((await list(null, created.integration.connectionId)).statusCode).toBe(401);
  });
});

describe('GET /v1/integrations/{integrationId}/contracts/{contractVersionId}', () => {
  it('returns the version with its full operations, uncached', async () => {
    const connectionId = await newConnection(boot, 'http-webhook', 'inbound');
    const created = await registerDraft(ctx, key(), connectionId, openApiRegistration('hooks', refundWebhooks()));
    const res = await read(key(), connectionId, created.contract.id);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      contract: {
        id: created.contract.id,
        declaredVersion: 'hooks',
        fingerprint: fingerprint(refundWebhooks()),
        importedFrom: 'openapi-3.1',
        lifecycleStatus: 'draft',
        activatedAt: null,
        supersededAt: null,
        createdAt: created.contract.createdAt,
        operations: [
          {
            id: expect.stringMatching(/^cop_[0-9a-z]{26}$/),
            operationKey: 'POST refund.created:message:default',
            direction: 'inbound',
            protocol: 'http-webhook',
            method: 'POST',
            routeTemplate: 'refund.created',
            basePaths: [],
            eventType: 'refund.created',
            payloadLocation: 'message',
            statusSelector: 'default',
            fingerprint: fingerprint({ type: 'object', properties: { refundId: { type: 'string' } }, required: ['refundId'] }),
            schema: { type: 'object', properties: { refundId: { type: 'string' } }, required: ['refundId'] },
            unchecked: [],
          },
        ],
      },
    });
  });

  it('answers contract_not_found for versions of another connection or workspace, and integration_not_found for a foreign path', async () => {
    const own = await newConnection();
    const sibling = await newConnection();
    const foreign = await newConnection(stranger);
    const siblingVersion = (await registerDraft(ctx, key(), sibling, openApiRegistration('s'))).contract.id;
    const foreignVersion = (await registerDraft(ctx, stranger.apiKey.key, foreign, openApiRegistration('f'))).contract.id;
    for (const versionId of [siblingVersion, foreignVersion, 'cv_00000000000000000000000000', 'cv_x', siblingVersion.toUpperCase(), own]) {
      const res = await read(key(), own, versionId);
      expect(res.statusCode, versionId).toBe(404);
      expect(res.json()).toEqual({ error: 'contract_not_found' });
    }
    for (const [integrationId, versionId] of [
      [foreign, foreignVersion],
      [foreign, siblingVersion],
      ['wint_00000000000000000000000000', siblingVersion],
    ]) {
      const res = await read(key(), integrationId, versionId);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'integration_not_found' });
    }
    const writer = await keyWith(boot, ['contracts:write']);
    const denied = await read(writer, sibling, siblingVersion);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ error: 'insufficient_scope' });
  });
});

describe('POST /v1/integrations/{integrationId}/contracts/{contractVersionId}/activate', () => {
  async function withDraft(protocol: Protocol = 'http-api') {
    const connectionId = await newConnection(boot, protocol, protocol === 'queue' ? 'inbound' : 'outbound');
    const body = protocol === 'queue' ? queueRegistration('v1') : openApiRegistration('v1');
    const versionId = (await registerDraft(ctx, key(), connectionId, body)).contract.id;
    return { connectionId, versionId };
  }

  it('activates a draft: result, connection pointer, analysis revision, activation row, outbox job and audit in one commit', async () => {
    const { connectionId, versionId } = await withDraft();
    const before = await contractState(ctx, connectionId);
    const res = await activateVersion(ctx, key(), connectionId, versionId, { expectedActiveContractVersionId: null, reason: 'promote' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({
      activationId: expect.stringMatching(/^act_[0-9a-z]{26}$/),
      activeContractVersionId: versionId,
      previousActiveContractVersionId: null,
      revision: 1,
    });
    const after = await contractState(ctx, connectionId);
    expect(after).toMatchObject({
      activations: 1,
      outbox: 1,
      audits: before.audits + 1,
      analysisRevision: 1,
      activeContractVersionId: versionId,
    });
    expect(after.revision).not.toBe(before.revision);
    const activation = await ctx.deps.pool.query('SELECT * FROM contract_activations WHERE id = $1', [body.activationId]);
    expect(activation.rows[0]).toMatchObject({
      connection_id: connectionId,
      contract_version_id: versionId,
      previous_active_contract_version_id: null,
      reason: 'promote',
      analysis_revision: 1,
      connection_revision: after.revision,
      api_key_id: boot.apiKey.id,
    });
    const job = await ctx.deps.pool.query(
      "SELECT payload, processed_at FROM outbox WHERE topic = 'reanalysis' AND payload->>'connectionId' = $1",
      [connectionId],
    );
    expect(job.rows).toEqual([
      {
        payload: {
          connectionId,
          contractVersionId: versionId,
          previousActiveContractVersionId: null,
          activationId: body.activationId,
          analysisRevision: 1,
        },
        processed_at: null,
      },
    ]);
    const audit = await ctx.deps.pool.query(
      "SELECT actor_id, target_id, metadata FROM audit_events WHERE action = 'contract.activate' AND target_id = $1",
      [versionId],
    );
    expect(audit.rows).toEqual([
      {
        actor_id: boot.apiKey.id,
        target_id: versionId,
        metadata: {
          connectionId,
          activationId: body.activationId,
          reason: 'promote',
          previousActiveContractVersionId: null,
          analysisRevision: 1,
          connectionRevision: after.revision,
        },
      },
    ]);
    const version = (await read(key(), connectionId, versionId)).json().contract;
    expect(version).toMatchObject({ lifecycleStatus: 'active', activatedAt: expect.stringMatching(/Z$/), supersededAt: null });
    // The connection read reports the new active version and revision.
    const connection = (await callWithKey(ctx, key(), 'GET', `/v1/connections/${connectionId}`)).json();
    expect(connection).toMatchObject({ activeContractVersionId: versionId, revision: after.revision });
  });

  it('returns connectionRevision only when the request carried expectedConnectionRevision; a stale one → 409, nothing written', async () => {
    const { connectionId, versionId } = await withDraft();
    const stale = '1';
    await expectUnchanged(
      connectionId,
      () =>
        activateVersion(ctx, key(), connectionId, versionId, {
          expectedActiveContractVersionId: null,
          reason: 'promote',
          expectedConnectionRevision: stale,
        }),
      409,
      { error: 'connection_configuration_changed' },
    );
    const current = (await contractState(ctx, connectionId)).revision;
    const result = await activateOk(ctx, key(), connectionId, versionId, {
      expectedActiveContractVersionId: null,
      reason: 'promote',
      expectedConnectionRevision: current,
    });
    const after = await contractState(ctx, connectionId);
    expect(result.connectionRevision).toBe(after.revision);
    expect(result.connectionRevision).not.toBe(current);
    const second = (await registerDraft(ctx, key(), connectionId, openApiRegistration('v2', ordersOpenApi(2)))).contract.id;
    const plain = await activateOk(ctx, key(), connectionId, second, { expectedActiveContractVersionId: versionId, reason: 'promote' });
    expect(plain).not.toHaveProperty('connectionRevision');
    expect(plain.previousActiveContractVersionId).toBe(versionId);
    expect((await read(key(), connectionId, versionId)).json().contract).toMatchObject({
      lifecycleStatus: 'superseded',
      supersededAt: expect.stringMatching(/Z$/),
    });
  });

  it('answers a stale precondition with 409 {error, activeContractVersionId} and writes nothing', async () => {
    const { connectionId, versionId } = await withDraft();
    await expectUnchanged(
      connectionId,
      () =>
        activateVersion(ctx, key(), connectionId, versionId, {
          expectedActiveContractVersionId: 'cv_01jx0000000000000000000000',
          reason: 'promote',
        }),
      409,
      { error: 'active_contract_changed', activeContractVersionId: null },
    );
    await activateOk(ctx, key(), connectionId, versionId, { expectedActiveContractVersionId: null, reason: 'promote' });
    const next = (await registerDraft(ctx, key(), connectionId, openApiRegistration('v2', ordersOpenApi(2)))).contract.id;
    await expectUnchanged(
      connectionId,
      () => activateVersion(ctx, key(), connectionId, next, { expectedActiveContractVersionId: null, reason: 'promote' }),
      409,
      { error: 'active_contract_changed', activeContractVersionId: versionId },
    );
  });

  it('lets exactly one of two concurrent activations with the same precondition win', async () => {
    const { connectionId, versionId } = await withDraft();
    const other = (await registerDraft(ctx, key(), connectionId, openApiRegistration('v2', ordersOpenApi(2)))).contract.id;
    const results = await Promise.all(
      [versionId, other].map((id) =>
        activateVersion(ctx, key(), connectionId, id, { expectedActiveContractVersionId: null, reason: 'promote' }),
      ),
    );
    expect(results.map((res) => res.statusCode).sort()).toEqual([200, 409]);
    const winner = results.find((res) => res.statusCode === 200)?.json().activeContractVersionId;
    expect(results.find((res) => res.statusCode === 409)?.json()).toEqual({
      error: 'active_contract_changed',
      activeContractVersionId: winner,
    });
    expect(await contractState(ctx, connectionId)).toMatchObject({
      activations: 1,
      outbox: 1,
      analysisRevision: 1,
      activeContractVersionId: winner,
    });
  });

  it('answers 400 invalid_contract_activation for invalid bodies and reasons, writing nothing', async () => {
    const { connectionId, versionId } = await withDraft();
    const bodies: unknown[] = [
      {},
      { reason: 'promote' },
      { expectedActiveContractVersionId: null },
      { expectedActiveContractVersionId: null, reason: 'demote' },
      { expectedActiveContractVersionId: null, reason: 'PROMOTE' },
      { expectedActiveContractVersionId: null, reason: 'promote', force: true },
      { expectedActiveContractVersionId: null, reason: 'promote', expectedConnectionRevision: 5 },
      { expectedActiveContractVersionId: 'int_00000000000000000000000000', reason: 'promote' },
      { expectedActiveContractVersionId: 7, reason: 'promote' },
      { expectedActiveContractVersionId: '', reason: 'rollback' },
      [],
    ];
    for (const body of bodies) {
      await expectUnchanged(connectionId, () => activateVersion(ctx, key(), connectionId, versionId, body), 400, {
        error: 'invalid_contract_activation',
      });
    }
    // No body at all is an invalid activation body too.
    await expectUnchanged(connectionId, () => callWithKey(ctx, key(), 'POST', activateUrl(connectionId, versionId)), 400, {
      error: 'invalid_contract_activation',
    });
  });

  it("answers 404 for foreign, malformed or other connections' versions and foreign integrations", async () => {
    const { connectionId, versionId } = await withDraft();
    const sibling = await withDraft();
    const foreign = await newConnection(stranger);
    const foreignVersion = (await registerDraft(ctx, stranger.apiKey.key, foreign, openApiRegistration('f'))).contract.id;
    const body = { expectedActiveContractVersionId: null, reason: 'promote' };
    for (const id of [sibling.versionId, foreignVersion, 'cv_00000000000000000000000000', 'cv_', connectionId]) {
      await expectUnchanged(connectionId, () => activateVersion(ctx, key(), connectionId, id, body), 404, { error: 'contract_not_found' });
    }
    for (const id of [foreign, 'wint_00000000000000000000000000', 'int_x']) {
      await expectUnchanged(foreign, () => activateVersion(ctx, key(), id, foreignVersion, body), 404, { error: 'integration_not_found' });
    }
    expect((await contractState(ctx, sibling.connectionId)).activations).toBe(0);
    expect(versionId).toMatch(/^cv_/);
  });

  it('needs contracts:activate (403 before 400) and a key (401)', async () => {
    const { connectionId, versionId } = await withDraft();
    const writer = await keyWith(boot, ['contracts:write', 'contracts:read', 'integrations:manage']);
    await expectUnchanged(
      connectionId,
      () => activateVersion(ctx, writer, connectionId, versionId, { expectedActiveContractVersionId: null, reason: 'promote' }),
      403,
      { error: 'insufficient_scope' },
    );
    await expectUnchanged(connectionId, () => activateVersion(ctx, writer, connectionId, versionId, { bad: 1 }), 403, {
      error: 'insufficient_scope',
    });
    await expectUnchanged(
      connectionId,
      () => activateVersion(ctx, null, connectionId, versionId, { expectedActiveContractVersionId: null, reason: 'promote' }),
      401,
      expect.objectContaining({ error: 'unauthenticated' }),
    );
  });

  it('answers 503 service_unavailable when reanalysis is unavailable, attempting nothing', async () => {
    const { connectionId, versionId } = await withDraft();
    const closed = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    closed.on('error', () => undefined);
    const app = await buildApp({ ...ctx.deps, redis: closed });
    try {
      const before = await contractState(ctx, connectionId);
      const res = await app.inject({
        method: 'POST',
        url: activateUrl(connectionId, versionId),
        headers: { authorization: `Bearer ${key()}` },
        payload: { expectedActiveContractVersionId: null, reason: 'promote' },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'service_unavailable' });
      expect(await contractState(ctx, connectionId)).toEqual(before);
    } finally {
      await app.close();
      closed.disconnect();
    }
    // With the analysis queue reachable the same request succeeds.
    await activateOk(ctx, key(), connectionId, versionId, { expectedActiveContractVersionId: null, reason: 'promote' });
  });

  it('answers 503 mode_cutover_write_paused while writes are paused, writing nothing', async () => {
    const { connectionId, versionId } = await withDraft();
    await setWritePause(ctx.deps.redis, true);
    try {
      const res = await expectUnchanged(
        connectionId,
        () => activateVersion(ctx, key(), connectionId, versionId, { expectedActiveContractVersionId: null, reason: 'promote' }),
        503,
        { error: 'mode_cutover_write_paused' },
      );
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await setWritePause(ctx.deps.redis, false);
    }
  });
});

describe('POST /contracts (retired browser-session writer)', () => {
  const post = (session: string | null, body: unknown, headers: Record<string, string> = {}) =>
    callWithSession(ctx, session, 'POST', '/contracts', { body, headers });

  function expectDeprecated(res: LightMyRequestResponse) {
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe('Tue, 01 Dec 2026 00:00:00 GMT');
  }

  it('answers every valid owned request with 409 canonical_lifecycle_required and changes nothing', async () => {
    const connectionId = await newConnection();
    const versionId = (await registerDraft(ctx, key(), connectionId, openApiRegistration('v1'))).contract.id;
    const bodies = [
      { integrationId: connectionId },
      { integrationId: connectionId, declaredVersion: 'v2', format: 'openapi', document: ordersOpenApi(3) },
      { integrationId: connectionId, contractVersionId: versionId, activate: true, environment: 'live' },
    ];
    for (const body of bodies) {
      const res = await expectUnchanged(connectionId, () => post(boot.sessionToken, body), 409, { error: 'canonical_lifecycle_required' });
      expectDeprecated(res);
    }
    expect(
      await ctx.deps.pool.query("SELECT 1 FROM audit_events WHERE workspace_id = $1 AND action LIKE 'contract.%' AND actor_type = 'user'", [
        boot.workspace.id,
      ]),
    ).toMatchObject({ rowCount: 0 });
  });

  it('answers unknown, unowned and malformed connections with 404 integration_not_found', async () => {
    const foreign = await newConnection(stranger);
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox' });
    for (const integrationId of [foreign, created.integration.id, 'int_00000000000000000000000000', 'x']) {
      const res = await expectUnchanged(foreign, () => post(boot.sessionToken, { integrationId }), 404, { error: 'integration_not_found' });
      expectDeprecated(res);
    }
  });

  it('keeps the deprecation headers on authentication, CSRF and body errors', async () => {
    const connectionId = await newConnection();
    const cases: [string, () => ReturnType<typeof post>, number, string][] = [
      ['no session', () => post(null, { integrationId: connectionId }), 401, 'unauthenticated'],
      [
        'an API key instead of a session',
        () => callWithKey(ctx, key(), 'POST', '/contracts', { body: { integrationId: connectionId } }),
        401,
        'unauthenticated',
      ],
      [
        'cross-site origin',
        () => post(boot.sessionToken, { integrationId: connectionId }, { origin: 'https://evil.example' }),
        403,
        'forbidden',
      ],
      ['missing integrationId', () => post(boot.sessionToken, { declaredVersion: 'v1' }), 400, 'invalid_contract'],
      ['non-object body', () => post(boot.sessionToken, ['x']), 400, 'invalid_contract'],
      [
        'unparsable JSON',
        () =>
          ctx.app.inject({
            method: 'POST',
            url: '/contracts',
            headers: { cookie: `session=${boot.sessionToken}`, origin: ctx.deps.config.consoleOrigin, 'content-type': 'application/json' },
            payload: '{"integrationId":',
          }),
        400,
        'invalid_request',
      ],
    ];
    for (const [label, run, status, code] of cases) {
      const res = await expectUnchanged(connectionId, run, status, expect.objectContaining({ error: code }));
      expect(res.statusCode, label).toBe(status);
      expectDeprecated(res);
    }
  });
});
