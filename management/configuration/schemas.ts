/** JSON Schemas of the configuration copy and compensation routes (02). */
import { FINGERPRINT_PATTERN } from '../../shared/fingerprint.js';
import { copiedArtifactsSchema, proofSchema, snapshotSchemaWith, snapshotSource } from './snapshotSchemas.js';

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

/** Both apply routes (copy and compensation here, second-mode setup) take the approved fingerprint only. */
export const applyBody = {
  type: 'object',
  required: ['approvalFingerprint'],
  properties: { approvalFingerprint: { type: 'string', pattern: FINGERPRINT_PATTERN.source } },
  additionalProperties: false,
} as const;

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;

const snapshotSchema = snapshotSchemaWith(snapshotSource, {
  type: 'object',
  required: ['mode', 'environmentId', 'connectionId', 'revision'],
  properties: { mode: string, environmentId: string, connectionId: string, revision: string },
});

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
  proof: proofSchema,
  copiedArtifacts: copiedArtifactsSchema,
  replayed: { type: 'boolean' },
  historical: { type: 'boolean' },
} as const;

/** 02 "Operation receipt (completed)". */
export const receiptSchema = {
  type: 'object',
  required: [
    'operationId',
    'action',
    'status',
    'connectionId',
    'workspaceIntegrationId',
    'mode',
    'revision',
    'completedAt',
    'originalOperationId',
    'proof',
    'copiedArtifacts',
    'replayed',
    'historical',
  ],
  properties: receiptProperties,
} as const;

/** The status read answers a review or a receipt. */
export const statusSchema = { anyOf: [receiptSchema, reviewSchema] } as const;
