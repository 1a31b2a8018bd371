/**
 * JSON Schemas of the second-mode setup routes (02 "Second-mode setup"). Responses are serialised
 * from them, so only the listed snapshot, receipt and connection fields can leave the service, and
 * `ingestToken` only where the first apply's schema lists it.
 */
import { copiedArtifactsSchema, proofSchema, snapshotSchemaWith, snapshotSource } from '../configuration/snapshotSchemas.js';
import { connectionViewSchema } from '../connections/connectionView.js';
import { integrationSchema, MODES } from '../integrations/schemas.js';

export { applyBody } from '../configuration/schemas.js';
export { noQuery, operationParams } from '../rules/schemas.js';

export const integrationParams = {
  type: 'object',
  required: ['workspaceIntegrationId'],
  properties: { workspaceIntegrationId: { type: 'string' } },
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

const string = { type: 'string' } as const;

const snapshotSchema = snapshotSchemaWith(
  { ...snapshotSource, type: ['object', 'null'] },
  { type: 'object', required: ['mode', 'environmentId'], properties: { mode: string, environmentId: string } },
);

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
const reviewRequired = [
  'operationId',
  'action',
  'status',
  'workspaceIntegrationId',
  'mode',
  'expiresAt',
  'fingerprint',
  'snapshot',
] as const;

/** The preview response, and a pending or expired review read. */
export const reviewSchema = { type: 'object', required: reviewRequired, properties: reviewProperties } as const;

const receiptProperties = {
  operationId: string,
  action: string,
  status: string,
  connectionId: string,
  workspaceIntegrationId: string,
  mode: string,
  revision: string,
  completedAt: string,
  proof: proofSchema,
  copiedArtifacts: copiedArtifactsSchema,
  integration: integrationSchema,
  connection: connectionViewSchema,
  replayed: { type: 'boolean' },
  historical: { type: 'boolean' },
  credentialRecoveryRequired: { type: 'boolean' },
} as const;
const receiptRequired = [
  'operationId',
  'action',
  'status',
  'connectionId',
  'workspaceIntegrationId',
  'mode',
  'revision',
  'completedAt',
  'proof',
  'copiedArtifacts',
  'integration',
  'connection',
  'collectorConfiguration',
  'replayed',
  'historical',
  'credentialRecoveryRequired',
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
