/** JSON Schemas of the reconciliation rule routes (02 "Reconciliation rules"). */

export { connectionParams } from '../credentials/schemas.js';

export const ruleParams = {
  type: 'object',
  required: ['connectionId', 'ruleId'],
  properties: { connectionId: { type: 'string' }, ruleId: { type: 'string' } },
  additionalProperties: false,
} as const;

export const operationParams = {
  type: 'object',
  required: ['operationId'],
  properties: { operationId: { type: 'string' } },
  additionalProperties: false,
} as const;

/** No query parameter is accepted where none is listed (02: unknown query parameters are rejected). */
export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string' }, cursor: { type: 'string' } },
} as const;

/** 02 Reconciliation rule: event and object types of 1 to 120 letters, digits, `.`, `_`, `:`, `-`. */
const typeName = { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,120}$' } as const;
const definition = {
  sourceEventType: typeName,
  expectedObjectType: typeName,
  maxDelayMs: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
  enabled: { type: 'boolean' },
} as const;
const expectedRevision = { type: 'string', minLength: 1, maxLength: 40 } as const;

export const createBody = {
  type: 'object',
  required: ['expectedRevision', 'sourceEventType', 'expectedObjectType', 'maxDelayMs'],
  properties: { expectedRevision, ...definition },
  additionalProperties: false,
} as const;

/** PATCH needs at least one definition field besides the revision. */
export const updateBody = {
  type: 'object',
  required: ['expectedRevision'],
  minProperties: 2,
  properties: { expectedRevision, ...definition },
  additionalProperties: false,
} as const;

export const deleteBody = {
  type: 'object',
  required: ['expectedRevision'],
  properties: { expectedRevision },
  additionalProperties: false,
} as const;

const timestamp = { type: 'string' } as const;

export const ruleSchema = {
  type: 'object',
  required: ['id', 'sourceEventType', 'expectedObjectType', 'maxDelayMs', 'enabled', 'lastEvaluatedAt', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    sourceEventType: { type: 'string' },
    expectedObjectType: { type: 'string' },
    maxDelayMs: { type: 'integer' },
    enabled: { type: 'boolean' },
    lastEvaluatedAt: { type: ['string', 'null'] },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

const contextProperties = {
  connectionId: { type: 'string' },
  workspaceIntegrationId: { type: 'string' },
  mode: { type: 'string' },
  revision: { type: 'string' },
} as const;
const contextRequired = ['connectionId', 'workspaceIntegrationId', 'mode', 'revision'] as const;

export const listResponse = {
  type: 'object',
  required: [...contextRequired, 'rules', 'nextCursor'],
  properties: { ...contextProperties, rules: { type: 'array', items: ruleSchema }, nextCursor: { type: ['string', 'null'] } },
} as const;

export const readResponse = {
  type: 'object',
  required: [...contextRequired, 'rule'],
  properties: { ...contextProperties, rule: ruleSchema },
} as const;

/** 02 Rule mutation receipt. */
export const receiptSchema = {
  type: 'object',
  required: [
    ...contextRequired,
    'operationId',
    'action',
    'status',
    'expectedRevision',
    'requestFingerprint',
    'completedAt',
    'rule',
    'replayed',
    'historical',
  ],
  properties: {
    ...contextProperties,
    operationId: { type: 'string' },
    action: { type: 'string', enum: ['rule.create', 'rule.update', 'rule.delete'] },
    status: { type: 'string', enum: ['completed'] },
    expectedRevision: { type: 'string' },
    requestFingerprint: { type: 'string' },
    completedAt: timestamp,
    rule: ruleSchema,
    replayed: { type: 'boolean' },
    historical: { type: 'boolean' },
  },
} as const;
