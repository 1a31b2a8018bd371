/** JSON Schemas of the configuration copy and compensation routes (02). */

export { connectionParams } from '../credentials/schemas.js';
export { noQuery, operationParams } from '../rules/schemas.js';

/** Arrays are bounded and checked for duplicates by the service: those are 400 `configuration_selection_invalid`. */
const idList = { type: 'array', items: { type: 'string' } } as const;

export const copyPreviewBody = {
  type: 'object',
  required: ['sourceConnectionId'],
  properties: { sourceConnectionId: { type: 'string' }, contractVersionIds: idList, ruleIds: idList },
  additionalProperties: false,
} as const;

/** 02: the compensation preview takes an empty JSON object. */
export const emptyBody = { type: 'object', properties: {}, additionalProperties: false } as const;

export const applyBody = {
  type: 'object',
  required: ['approvalFingerprint'],
  properties: { approvalFingerprint: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } },
  additionalProperties: false,
} as const;

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const openObject = { type: 'object', additionalProperties: true } as const;

const snapshotOperation = {
  type: 'object',
  required: ['operationKey', 'method', 'routeTemplate', 'eventType', 'payloadLocation', 'statusSelector', 'fingerprint', 'schema', 'unchecked'],
  properties: {
    operationKey: string,
    method: string,
    routeTemplate: string,
    eventType: nullableString,
    payloadLocation: string,
    statusSelector: string,
    fingerprint: string,
    schema: openObject,
    unchecked: {
      type: 'array',
      items: { type: 'object', required: ['pointer', 'schemaPointer', 'reason'], properties: { pointer: string, schemaPointer: string, reason: string } },
    },
  },
} as const;

const snapshotContract = {
  type: 'object',
  required: ['sourceContractVersionId', 'declaredVersion', 'signature', 'fingerprint', 'importedFrom', 'lifecycleStatus', 'operations'],
  properties: {
    sourceContractVersionId: string,
    declaredVersion: string,
    signature: string,
    fingerprint: string,
    importedFrom: string,
    lifecycleStatus: { type: 'string', enum: ['draft'] },
    operations: { type: 'array', items: snapshotOperation },
  },
} as const;

const snapshotRule = {
  type: 'object',
  required: ['sourceRuleId', 'sourceEventType', 'expectedObjectType', 'maxDelayMs', 'enabled'],
  properties: { sourceRuleId: string, sourceEventType: string, expectedObjectType: string, maxDelayMs: { type: 'integer' }, enabled: { type: 'boolean' } },
} as const;

/** 02 "Review snapshot": a whitelist, so nothing else can be serialised. */
const snapshotSchema = {
  type: 'object',
  required: ['identity', 'source', 'destination', 'contracts', 'rules', 'fingerprint'],
  properties: {
    identity: {
      type: 'object',
      required: ['id', 'revision', 'tenantId', 'name', 'provider', 'direction', 'protocol'],
      properties: { id: string, revision: string, tenantId: string, name: string, provider: string, direction: string, protocol: string },
    },
    source: { type: 'object', required: ['connectionId', 'environmentId', 'revision'], properties: { connectionId: string, environmentId: string, revision: string } },
    destination: {
      type: 'object',
      required: ['mode', 'environmentId', 'connectionId', 'revision'],
      properties: { mode: string, environmentId: string, connectionId: string, revision: string },
    },
    contracts: { type: 'array', items: snapshotContract },
    rules: { type: 'array', items: snapshotRule },
    fingerprint: string,
  },
} as const;

const copiedArtifactsSchema = {
  type: 'object',
  required: ['contracts', 'rules'],
  properties: {
    contracts: {
      type: 'array',
      items: { type: 'object', required: ['sourceContractVersionId', 'destinationContractVersionId'], properties: { sourceContractVersionId: string, destinationContractVersionId: string } },
    },
    rules: {
      type: 'array',
      items: { type: 'object', required: ['sourceRuleId', 'destinationRuleId'], properties: { sourceRuleId: string, destinationRuleId: string } },
    },
  },
} as const;

const action = { type: 'string', enum: ['configuration.copy', 'configuration.compensate'] } as const;

const reviewProperties = {
  operationId: string,
  action,
  status: { type: 'string', enum: ['previewed', 'expired'] },
  expiresAt: string,
  fingerprint: string,
  originalOperationId: nullableString,
  snapshot: snapshotSchema,
  copiedArtifacts: { anyOf: [{ type: 'null' }, copiedArtifactsSchema] },
} as const;

/** 02 "Operation review (preview or expired)". */
export const reviewSchema = {
  type: 'object',
  required: ['operationId', 'action', 'status', 'expiresAt', 'fingerprint', 'originalOperationId', 'snapshot', 'copiedArtifacts'],
  properties: reviewProperties,
} as const;

const receiptProperties = {
  operationId: string,
  action,
  status: { type: 'string', enum: ['completed'] },
  connectionId: string,
  workspaceIntegrationId: string,
  mode: string,
  revision: string,
  completedAt: string,
  originalOperationId: nullableString,
  proof: {
    type: 'object',
    required: ['schema', 'approvalFingerprint', 'configurationFingerprint'],
    properties: { schema: string, approvalFingerprint: string, configurationFingerprint: string },
  },
  copiedArtifacts: copiedArtifactsSchema,
  replayed: { type: 'boolean' },
  historical: { type: 'boolean' },
} as const;

/** 02 "Operation receipt (completed)". */
export const receiptSchema = {
  type: 'object',
  required: ['operationId', 'action', 'status', 'connectionId', 'workspaceIntegrationId', 'mode', 'revision', 'completedAt', 'originalOperationId', 'proof', 'copiedArtifacts', 'replayed', 'historical'],
  properties: receiptProperties,
} as const;

/** The status read answers a review or a receipt. */
export const statusSchema = { anyOf: [receiptSchema, reviewSchema] } as const;
