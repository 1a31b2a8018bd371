/**
 * JSON Schemas of the Contract API (01 "Contract version", "Contract operation", "Activation
 * result"). Responses are serialised from them, so nothing unlisted (the stored document, content
 * signatures, key ids) can leave the service.
 */
import { DIRECTIONS, PROTOCOLS } from '../integrations/schemas.js';

const nullableString = { type: ['string', 'null'] } as const;

export const integrationParams = {
  type: 'object',
  required: ['integrationId'],
  properties: { integrationId: { type: 'string' } },
  additionalProperties: false,
} as const;

export const versionParams = {
  type: 'object',
  required: ['integrationId', 'contractVersionId'],
  properties: { integrationId: { type: 'string' }, contractVersionId: { type: 'string' } },
  additionalProperties: false,
} as const;

/** 01 Register body. `operation` is required with `json-schema` and refused with `openapi` (checked by the import). */
export const registrationBody = {
  type: 'object',
  additionalProperties: false,
  required: ['declaredVersion', 'format', 'document'],
  properties: {
    declaredVersion: { type: 'string', minLength: 1, maxLength: 120, pattern: '^[^\\u0000-\\u001f\\u007f]+$' },
    format: { type: 'string', enum: ['openapi', 'json-schema'] },
    document: { type: 'object' },
    operation: {
      type: 'object',
      additionalProperties: false,
      required: ['method', 'routeTemplate', 'payloadLocation', 'statusSelector'],
      properties: {
        method: { type: 'string' },
        routeTemplate: { type: 'string' },
        payloadLocation: { type: 'string' },
        statusSelector: { type: 'string' },
      },
    },
    expectedScope: {
      type: 'object',
      additionalProperties: false,
      required: ['direction', 'protocol'],
      properties: {
        direction: { type: 'string', enum: DIRECTIONS },
        protocol: { type: 'string', enum: PROTOCOLS },
      },
    },
    expectedConnectionRevision: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

/** 01 Activate body; the precondition member must be present (null when no version is active). */
export const activationBody = {
  type: 'object',
  additionalProperties: false,
  required: ['expectedActiveContractVersionId', 'reason'],
  properties: {
    expectedActiveContractVersionId: { anyOf: [{ type: 'string', pattern: '^cv_[0-9a-hjkmnp-tv-z]{26}$' }, { type: 'null' }] },
    reason: { type: 'string', enum: ['promote', 'rollback'] },
    expectedConnectionRevision: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string' },
    cursor: { type: 'string' },
  },
} as const;

const timestamp = { type: 'string' } as const;

export const registrationFormSchema = {
  type: 'object',
  required: ['id', 'declaredVersion', 'fingerprint', 'importedFrom', 'lifecycleStatus', 'operationCount', 'createdAt'],
  properties: {
    id: { type: 'string' },
    declaredVersion: { type: 'string' },
    fingerprint: { type: 'string' },
    importedFrom: { type: 'string' },
    lifecycleStatus: { type: 'string', enum: ['draft', 'active', 'superseded'] },
    operationCount: { type: 'integer' },
    createdAt: timestamp,
  },
} as const;

export const operationSchema = {
  type: 'object',
  required: [
    'id',
    'operationKey',
    'direction',
    'protocol',
    'method',
    'routeTemplate',
    'basePaths',
    'eventType',
    'payloadLocation',
    'statusSelector',
    'fingerprint',
    'schema',
    'unchecked',
  ],
  properties: {
    id: { type: 'string' },
    operationKey: { type: 'string' },
    direction: { type: 'string' },
    protocol: { type: 'string' },
    method: { type: 'string' },
    routeTemplate: { type: 'string' },
    basePaths: { type: 'array', items: { type: 'string' } },
    eventType: nullableString,
    payloadLocation: { type: 'string' },
    statusSelector: { type: 'string' },
    fingerprint: { type: 'string' },
    // An imported JSON Schema: open-ended by nature.
    schema: { type: 'object', additionalProperties: true },
    unchecked: {
      type: 'array',
      items: {
        type: 'object',
        required: ['pointer', 'schemaPointer', 'reason'],
        properties: { pointer: { type: 'string' }, schemaPointer: { type: 'string' }, reason: { type: 'string' } },
      },
    },
  },
} as const;

export const contractVersionSchema = {
  type: 'object',
  required: [
    'id',
    'declaredVersion',
    'fingerprint',
    'importedFrom',
    'lifecycleStatus',
    'activatedAt',
    'supersededAt',
    'createdAt',
    'operations',
  ],
  properties: {
    id: { type: 'string' },
    declaredVersion: { type: 'string' },
    fingerprint: { type: 'string' },
    importedFrom: { type: 'string' },
    lifecycleStatus: { type: 'string', enum: ['draft', 'active', 'superseded'] },
    activatedAt: nullableString,
    supersededAt: nullableString,
    createdAt: timestamp,
    operations: { type: 'array', items: operationSchema },
  },
} as const;

export const registrationResponse = {
  type: 'object',
  required: ['contract', 'skipped', 'connectionRevision'],
  properties: {
    contract: registrationFormSchema,
    skipped: {
      type: 'array',
      items: { type: 'object', required: ['pointer', 'reason'], properties: { pointer: { type: 'string' }, reason: { type: 'string' } } },
    },
    connectionRevision: { type: 'string' },
  },
} as const;

export const listResponse = {
  type: 'object',
  required: ['integration', 'activeContractVersionId', 'contracts', 'nextCursor'],
  properties: {
    integration: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    activeContractVersionId: nullableString,
    contracts: { type: 'array', items: contractVersionSchema },
    nextCursor: nullableString,
  },
} as const;

export const singleResponse = {
  type: 'object',
  required: ['contract'],
  properties: { contract: contractVersionSchema },
} as const;

export const activationResponse = {
  type: 'object',
  required: ['activationId', 'activeContractVersionId', 'previousActiveContractVersionId', 'revision'],
  properties: {
    activationId: { type: 'string' },
    activeContractVersionId: { type: 'string' },
    previousActiveContractVersionId: nullableString,
    revision: { type: 'integer' },
    connectionRevision: { type: 'string' },
  },
} as const;
