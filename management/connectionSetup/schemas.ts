/**
 * JSON Schemas of the second-mode setup routes (02 "Second-mode setup"). Responses are serialised
 * from them, so only the listed snapshot, receipt and connection fields can leave the service, and
 * `ingestToken` only where the first apply's schema lists it.
 */
import { FINGERPRINT_PATTERN } from '../../shared/fingerprint.js';
import { integrationSchema, MODES } from '../integrations/schemas.js';

export { noQuery } from '../rules/schemas.js';

export const integrationParams = {
  type: 'object',
  required: ['workspaceIntegrationId'],
  properties: { workspaceIntegrationId: { type: 'string' } },
  additionalProperties: false,
} as const;

export const operationParams = {
  type: 'object',
  required: ['operationId'],
  properties: { operationId: { type: 'string' } },
  additionalProperties: false,
} as const;

/** Counts, uniqueness and id forms of the arrays are selection rules (`configuration_selection_invalid`), checked by the service. */
const selection = { type: 'array', items: { type: 'string' }, default: [] } as const;
const nonEmpty = { type: 'array', minItems: 1 } as const;

/** 02 preview body: a source is required as soon as anything is selected. */
export const previewBody = {
  type: 'object',
  additionalProperties: false,
  required: ['destinationMode'],
  properties: {
    destinationMode: { type: 'string', enum: MODES },
    contractVersionIds: selection,
    ruleIds: selection,
    sourceConnectionId: { type: 'string' },
  },
  if: {
    anyOf: [
      { required: ['contractVersionIds'], properties: { contractVersionIds: nonEmpty } },
      { required: ['ruleIds'], properties: { ruleIds: nonEmpty } },
    ],
  },
  then: { required: ['sourceConnectionId'] },
} as const;

export const applyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['approvalFingerprint'],
  properties: { approvalFingerprint: { type: 'string', pattern: FINGERPRINT_PATTERN.source } },
} as const;

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const openObject = { type: 'object', additionalProperties: true } as const;

const snapshotContract = {
  type: 'object',
  required: ['sourceContractVersionId', 'declaredVersion', 'signature', 'fingerprint', 'importedFrom', 'lifecycleStatus', 'operations'],
  properties: {
    sourceContractVersionId: string,
    declaredVersion: string,
    signature: string,
    fingerprint: string,
    importedFrom: string,
    lifecycleStatus: string,
    operations: {
      type: 'array',
      items: {
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
      },
    },
  },
} as const;

const snapshotRule = {
  type: 'object',
  required: ['sourceRuleId', 'sourceEventType', 'expectedObjectType', 'maxDelayMs', 'enabled'],
  properties: { sourceRuleId: string, sourceEventType: string, expectedObjectType: string, maxDelayMs: { type: 'integer' }, enabled: { type: 'boolean' } },
} as const;

export const snapshotSchema = {
  type: 'object',
  required: ['identity', 'source', 'destination', 'contracts', 'rules', 'fingerprint'],
  properties: {
    identity: {
      type: 'object',
      required: ['id', 'revision', 'tenantId', 'name', 'provider', 'direction', 'protocol'],
      properties: { id: string, revision: string, tenantId: string, name: string, provider: string, direction: string, protocol: string },
    },
    source: {
      type: ['object', 'null'],
      required: ['connectionId', 'environmentId', 'revision'],
      properties: { connectionId: string, environmentId: string, revision: string },
    },
    destination: { type: 'object', required: ['mode', 'environmentId'], properties: { mode: string, environmentId: string } },
    contracts: { type: 'array', items: snapshotContract },
    rules: { type: 'array', items: snapshotRule },
    fingerprint: string,
  },
} as const;

const reviewProperties = {
  operationId: string,
  action: string,
  status: string,
  workspaceIntegrationId: string,
  mode: string,
  expiresAt: string,
  fingerprint: string,
  snapshot: snapshotSchema,
} as const;
const reviewRequired = ['operationId', 'action', 'status', 'workspaceIntegrationId', 'mode', 'expiresAt', 'fingerprint', 'snapshot'] as const;

/** The preview response, and a pending or expired review read. */
export const reviewSchema = { type: 'object', required: reviewRequired, properties: reviewProperties } as const;

const connectionSchema = {
  type: 'object',
  required: ['id', 'workspaceIntegrationId', 'name', 'provider', 'direction', 'protocol', 'environment', 'revision', 'credentialStatus', 'activeContractVersionId'],
  properties: {
    id: string,
    workspaceIntegrationId: string,
    name: string,
    provider: string,
    direction: string,
    protocol: string,
    environment: { type: 'object', required: ['id', 'category', 'mode'], properties: { id: string, category: string, mode: string } },
    revision: string,
    credentialStatus: string,
    activeContractVersionId: nullableString,
  },
} as const;

const mapping = (from: string, to: string) => ({
  type: 'array',
  items: { type: 'object', required: [from, to], properties: { [from]: string, [to]: string } },
} as const);

const receiptProperties = {
  operationId: string,
  action: string,
  status: string,
  connectionId: string,
  workspaceIntegrationId: string,
  mode: string,
  revision: string,
  completedAt: string,
  proof: {
    type: 'object',
    required: ['schema', 'approvalFingerprint', 'configurationFingerprint'],
    properties: { schema: string, approvalFingerprint: string, configurationFingerprint: string },
  },
  copiedArtifacts: {
    type: 'object',
    required: ['contracts', 'rules'],
    properties: {
      contracts: mapping('sourceContractVersionId', 'destinationContractVersionId'),
      rules: mapping('sourceRuleId', 'destinationRuleId'),
    },
  },
  integration: integrationSchema,
  connection: connectionSchema,
  replayed: { type: 'boolean' },
  historical: { type: 'boolean' },
  credentialRecoveryRequired: { type: 'boolean' },
} as const;
const receiptRequired = [
  'operationId', 'action', 'status', 'connectionId', 'workspaceIntegrationId', 'mode', 'revision', 'completedAt', 'proof',
  'copiedArtifacts', 'integration', 'connection', 'collectorConfiguration', 'replayed', 'historical', 'credentialRecoveryRequired',
] as const;

const collectorConfiguration = (withToken: boolean) => ({
  type: 'object',
  required: withToken ? ['integrationKey', 'connectionKey', 'ingestToken'] : ['integrationKey', 'connectionKey'],
  properties: { integrationKey: string, connectionKey: string, ...(withToken ? { ingestToken: string } : {}) },
});

/** The first apply: the receipt plus the one-time `ingestToken`. */
export const firstReceiptSchema = {
  type: 'object',
  required: receiptRequired,
  properties: { ...receiptProperties, collectorConfiguration: collectorConfiguration(true) },
} as const;

/** A replayed or recovered receipt: no `ingestToken` member exists, so none can be serialised. */
export const receiptSchema = {
  type: 'object',
  required: receiptRequired,
  properties: { ...receiptProperties, collectorConfiguration: collectorConfiguration(false) },
} as const;

/**
 * The status read answers a review (pending or expired) or the completed receipt: one schema
 * holding both forms' members (never a token), each form serialising only its own.
 */
export const statusSchema = {
  type: 'object',
  required: ['operationId', 'action', 'status'],
  properties: { ...reviewProperties, ...receiptProperties, collectorConfiguration: collectorConfiguration(false) },
} as const;
