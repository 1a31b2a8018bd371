import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { callWithKey, type TestContext } from './context.js';

/** The shared corpus beside the clone (`../shared/corpus/openapi/`), or CORPUS_DIR. */
export const CORPUS_DIR = process.env.CORPUS_DIR ?? fileURLToPath(new URL('../../../shared/corpus/openapi/', import.meta.url));

export function loadCorpusDocument(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(CORPUS_DIR + file, 'utf8'));
}

const orderSchema = {
  type: 'object',
  required: ['id', 'total'],
  properties: { id: { type: 'string' }, total: { type: 'number' }, note: { type: 'string' } },
};

/**
 * A small OpenAPI 3.1 document for an `http-api` connection: two JSON operations and a third
 * whose payload the import leaves unchecked (a `oneOf`). `variant` changes one schema, so two variants have
 * different fingerprints and content.
 */
export function ordersOpenApi(variant = 0): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Orders', version: `1.${variant}` },
    paths: {
      '/v1/orders': {
        post: {
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
          responses: {
            '201': { description: 'created', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
            '400': { description: 'bad', content: { 'application/json': { schema: { oneOf: [{ type: 'string' }, { type: 'object' }] } } } },
          },
        },
      },
    },
    components: {
      schemas: {
        Order:
          variant === 0
            ? orderSchema
            : { ...orderSchema, properties: { ...orderSchema.properties, [`extra${variant}`]: { type: 'integer' } } },
      },
    },
  };
}

/** A small OpenAPI 3.1 document for an `http-webhook` connection. */
export function refundWebhooks(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Refund hooks', version: '1' },
    webhooks: {
      'refund.created': {
        post: {
          requestBody: {
            content: {
              'application/json': { schema: { type: 'object', properties: { refundId: { type: 'string' } }, required: ['refundId'] } },
            },
          },
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  };
}

/** An operation-bound JSON Schema registration body for a `queue` connection. */
export function queueRegistration(declaredVersion: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    declaredVersion,
    format: 'json-schema',
    document: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    },
    operation: { method: 'POST', routeTemplate: 'orders.created', payloadLocation: 'message', statusSelector: 'default' },
    ...extra,
  };
}

export function openApiRegistration(
  declaredVersion: string,
  document: Record<string, unknown> = ordersOpenApi(),
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { declaredVersion, format: 'openapi', document, ...extra };
}

export const contractsUrl = (integrationId: string) => `/v1/integrations/${integrationId}/contracts`;
export const contractUrl = (integrationId: string, versionId: string) => `/v1/integrations/${integrationId}/contracts/${versionId}`;
export const activateUrl = (integrationId: string, versionId: string) =>
  `/v1/integrations/${integrationId}/contracts/${versionId}/activate`;

export function registerVersion(
  ctx: TestContext,
  key: string | null,
  integrationId: string,
  body: unknown,
): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', contractsUrl(integrationId), { body });
}

export function activateVersion(
  ctx: TestContext,
  key: string | null,
  integrationId: string,
  versionId: string,
  body: unknown,
): Promise<LightMyRequestResponse> {
  return callWithKey(ctx, key, 'POST', activateUrl(integrationId, versionId), { body });
}

/** Registers and expects 201; returns the body. */
export async function registerDraft(
  ctx: TestContext,
  key: string,
  integrationId: string,
  body: unknown,
): Promise<{
  contract: { id: string; declaredVersion: string; fingerprint: string; createdAt: string };
  connectionRevision: string;
  skipped: unknown[];
}> {
  const res = await registerVersion(ctx, key, integrationId, body);
  if (res.statusCode !== 201) throw new Error(`register answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Activates and expects 200; returns the activation result. */
export async function activateOk(
  ctx: TestContext,
  key: string,
  integrationId: string,
  versionId: string,
  body: unknown,
): Promise<{
  activationId: string;
  activeContractVersionId: string;
  previousActiveContractVersionId: string | null;
  revision: number;
  connectionRevision?: string;
}> {
  const res = await activateVersion(ctx, key, integrationId, versionId, body);
  if (res.statusCode !== 200) throw new Error(`activate answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Everything a contract write can touch for one connection, to prove what a request changed. */
export interface ContractState {
  versions: number;
  operations: number;
  activations: number;
  audits: number;
  outbox: number;
  revision: string;
  analysisRevision: number;
  activeContractVersionId: string | null;
  statuses: Record<string, string>;
}

export async function contractState(ctx: TestContext, connectionId: string): Promise<ContractState> {
  const db = ctx.deps.pool;
  const count = async (sql: string) => (await db.query<{ n: number }>(sql, [connectionId])).rows[0].n;
  const connection = (
    await db.query('SELECT revision, analysis_revision, active_contract_version_id FROM connections WHERE id = $1', [connectionId])
  ).rows[0];
  const statuses = (
    await db.query<{ id: string; lifecycle_status: string }>(
      'SELECT id, lifecycle_status FROM contract_versions WHERE connection_id = $1',
      [connectionId],
    )
  ).rows;
  return {
    versions: await count('SELECT count(*)::int AS n FROM contract_versions WHERE connection_id = $1'),
    operations: await count(
      'SELECT count(*)::int AS n FROM contract_operations o JOIN contract_versions v ON v.id = o.contract_version_id WHERE v.connection_id = $1',
    ),
    activations: await count('SELECT count(*)::int AS n FROM contract_activations WHERE connection_id = $1'),
    audits: await count("SELECT count(*)::int AS n FROM audit_events WHERE action LIKE 'contract.%' AND metadata->>'connectionId' = $1"),
    outbox: await count("SELECT count(*)::int AS n FROM outbox WHERE topic = 'reanalysis' AND payload->>'connectionId' = $1"),
    revision: connection.revision,
    analysisRevision: connection.analysis_revision,
    activeContractVersionId: connection.active_contract_version_id,
    statuses: Object.fromEntries(statuses.map((row) => [row.id, row.lifecycle_status])),
  };
}
