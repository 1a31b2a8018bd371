import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importOpenApi, MAX_IMPORT_SCHEMA_BYTES } from '../shared/contracts/importOpenApi.js';
import { isAppError } from '../shared/errors/index.js';
import { ImportPool } from '../management/contracts/importPool.js';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { contractsUrl, contractUrl, openApiRegistration } from './helpers/contracts.js';
import { bootstrapWorkspace, createTestContext, type TestContext } from './helpers/context.js';
import { createIntegration } from './helpers/integrations.js';
import { spawnProcess, type SpawnedProcess } from './helpers/processes.js';
import { allOfChainDocument, sharedDefinitionDocument } from './helpers/sharedSchemaDocuments.js';
import { waitFor } from './helpers/wait.js';

// The compiled management plane (`npm run build` first): contract imports run on its import
// thread, so one tenant's document cannot hold the event loop every tenant's requests need.

let ctx: TestContext;
let boot: BootstrapResult;
let management: SpawnedProcess;
beforeAll(async () => {
  ctx = await createTestContext();
  boot = await bootstrapWorkspace(ctx);
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT');
});
afterAll(async () => {
  await management?.stop();
  await ctx?.close();
});

async function newConnection(): Promise<string> {
  return (await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox', name: 'Shared schemas' })).integration.connectionId;
}

function register(connectionId: string, body: unknown): Promise<Response> {
  return fetch(management.url + contractsUrl(connectionId), {
    method: 'POST',
    headers: { authorization: `Bearer ${boot.apiKey.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function importsInProgress(): Promise<number> {
  const text = await (await fetch(`${management.url}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith('contract_imports_in_progress'));
  return Number(line?.split(' ').pop() ?? NaN);
}

describe('contract import off the event loop (issue 25)', () => {
  it('registers the 24-level allOf chain through the running plane; the read gives the schema the import made', async () => {
    const connectionId = await newConnection();
    const document = allOfChainDocument(24);
    const res = await register(connectionId, openApiRegistration('chain', document));
    expect(res.status).toBe(201);
    const { contract } = (await res.json()) as { contract: { id: string } };
    const read = await fetch(management.url + contractUrl(connectionId, contract.id), {
      headers: { authorization: `Bearer ${boot.apiKey.key}` },
    });
    const {
      contract: { operations },
    } = (await read.json()) as { contract: { operations: { fingerprint: string; schema: unknown }[] } };
    const [expected] = importOpenApi(document, 'http-api').operations;
    expect(operations).toHaveLength(1);
    expect(operations[0].schema).toStrictEqual(expected.schema);
    expect(operations[0].fingerprint).toBe(expected.fingerprint);
  });

  it('answers /healthz while a document past the import budget is being imported, then refuses it naming the limit', async () => {
    const connectionId = await newConnection();
    let answered = false;
    const registration = register(connectionId, openApiRegistration('too-much', sharedDefinitionDocument(2_000, 5_000))).then((res) => {
      answered = true;
      return res;
    });
    await waitFor(async () => ((await importsInProgress()) === 1 ? true : undefined), 20_000, 'the import to be under way');
    const health = await fetch(`${management.url}/healthz`);
    expect(health.status).toBe(200);
    expect(answered).toBe(false);
    const res = await registration;
    expect(res.status).toBe(400);
    expect(await res.json()).toStrictEqual({
      error: 'invalid_contract',
      pointers: [''],
      reason: `the operations' schemas exceed ${MAX_IMPORT_SCHEMA_BYTES} bytes in all (the limit per import)`,
    });
    expect(await importsInProgress()).toBe(0);
  });

  it('stores a definition every operation shares once on the version, and reads each operation self-contained', async () => {
    const connectionId = await newConnection();
    const document = sharedDefinitionDocument(50, 200);
    const res = await register(connectionId, openApiRegistration('shared', document));
    expect(res.status).toBe(201);
    const { contract } = (await res.json()) as { contract: { id: string } };
    const version = await ctx.deps.pool.query<{ definitions: Record<string, unknown> }>(
      'SELECT definitions FROM contract_versions WHERE id = $1',
      [contract.id],
    );
    expect(Object.keys(version.rows[0].definitions)).toStrictEqual(['Big']);
    const stored = await ctx.deps.pool.query<{ schema: Record<string, unknown> }>(
      'SELECT schema FROM contract_operations WHERE contract_version_id = $1',
      [contract.id],
    );
    expect(stored.rows).toHaveLength(50);
    for (const row of stored.rows) expect(row.schema).toStrictEqual({ $ref: '#/$defs/Big' });
    const read = await fetch(management.url + contractUrl(connectionId, contract.id), {
      headers: { authorization: `Bearer ${boot.apiKey.key}` },
    });
    const {
      contract: { operations },
    } = (await read.json()) as { contract: { operations: { operationKey: string; fingerprint: string; schema: unknown }[] } };
    const imported = new Map(importOpenApi(document, 'http-api').operations.map((operation) => [operation.operationKey, operation]));
    expect(operations).toHaveLength(50);
    for (const operation of operations) {
      expect(operation.schema).toStrictEqual(imported.get(operation.operationKey)?.schema);
      expect(operation.fingerprint).toBe(imported.get(operation.operationKey)?.fingerprint);
    }
  });

  it('refuses an import that runs past the time limit, naming the limit, and the next import runs on a new thread', async () => {
    const pool = new ImportPool({ timeLimitMs: 50 });
    try {
      // A first import starts the thread, so the limit measures the import, not the thread's start.
      expect((await pool.run({ format: 'openapi', document: allOfChainDocument(4) }, 'http-api')).operations).toHaveLength(1);
      const refusal = await pool.run({ format: 'openapi', document: sharedDefinitionDocument(2_000, 5_000) }, 'http-api').then(
        () => null,
        (error: unknown) => error,
      );
      expect(isAppError(refusal) && refusal.code === 'invalid_contract' && refusal.extra.reason).toBe(
        'the import ran longer than 0.05 s (the limit per import)',
      );
      const imported = await pool.run({ format: 'openapi', document: allOfChainDocument(4) }, 'http-api');
      expect(imported.operations).toHaveLength(1);
    } finally {
      await pool.close();
    }
  });
});
