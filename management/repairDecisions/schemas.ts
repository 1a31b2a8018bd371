/**
 * JSON Schemas of the reviewed-repair operation routes (03 "Decision preview", "CLI operation
 * receipt", "Repair export bundle", Reviewed repairs). Responses are serialised from them, so
 * nothing unlisted leaves the service; every response object carries `schemaVersion: 1`.
 */
import { FINGERPRINT_PATTERN } from '../../shared/fingerprint.js';
import { REPAIR_EXPORT_MARKER } from '../../shared/repairs/types.js';
import { schemaVersionSchema as schemaVersion } from '../auth/cliApi.js';

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const fingerprint = { type: 'string', pattern: FINGERPRINT_PATTERN.source } as const;
const decision = { type: 'string', enum: ['approved', 'rejected'] } as const;

export { noQuery } from '../cliEvidence/schemas.js';

export const proposalParams = {
  type: 'object',
  required: ['connectionId', 'proposalId'],
  additionalProperties: false,
  properties: { connectionId: string, proposalId: string },
} as const;

export const operationParams = {
  type: 'object',
  required: ['operationId'],
  additionalProperties: false,
  properties: { operationId: string },
} as const;

/**
 * 03 Reviewed repairs 1. The rationale's trimmed length (10 to 1000 characters) is checked by the
 * service; untrimmed, it cannot be shorter.
 */
export const previewBody = {
  type: 'object',
  required: ['decision', 'rationale'],
  additionalProperties: false,
  properties: { decision, rationale: { type: 'string', minLength: 10 } },
} as const;

export const applyBody = {
  type: 'object',
  required: ['approvalFingerprint'],
  additionalProperties: false,
  properties: { approvalFingerprint: fingerprint },
} as const;

/** `{}` (files, as `{"target": "files"}`) or `{"target": "pull_request"}` (00-decisions §6: no code host). */
export const exportBody = {
  type: 'object',
  additionalProperties: false,
  properties: { target: { type: 'string', enum: ['files', 'pull_request'] } },
} as const;

const validationSchema = {
  anyOf: [
    { type: 'null' },
    {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'valid', 'replayPassed', 'replayRunId', 'replayStatus', 'adapterFingerprint', 'schemaChecksFingerprint'],
      properties: {
        id: string,
        valid: { type: 'boolean' },
        replayPassed: { type: 'boolean' },
        replayRunId: string,
        replayStatus: string,
        adapterFingerprint: string,
        schemaChecksFingerprint: string,
      },
    },
  ],
} as const;

const reviewSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'proposalId',
    'connectionId',
    'status',
    'proposalFingerprint',
    'validation',
    'patchArtifactFingerprint',
    'repositoryMappingId',
    'decision',
    'rationale',
  ],
  properties: {
    proposalId: string,
    connectionId: string,
    status: string,
    proposalFingerprint: string,
    validation: validationSchema,
    patchArtifactFingerprint: nullableString,
    repositoryMappingId: nullableString,
    decision,
    rationale: string,
  },
} as const;

/** 03 Decision preview (201), and a pending or expired preview read. */
export const previewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'operationId', 'connectionId', 'proposalId', 'status', 'approvalFingerprint', 'expiresAt', 'review'],
  properties: {
    schemaVersion,
    operationId: string,
    connectionId: string,
    proposalId: string,
    status: { type: 'string', enum: ['previewed', 'expired'] },
    approvalFingerprint: string,
    expiresAt: string,
    review: reviewSchema,
  },
} as const;

function receiptSchema(action: string, data: object) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['schemaVersion', 'operationId', 'action', 'targetId', 'connectionId', 'status', 'data', 'completedAt', 'replayed'],
    properties: {
      schemaVersion,
      operationId: string,
      action: { type: 'string', enum: [action] },
      targetId: string,
      connectionId: string,
      status: { type: 'string', enum: ['completed'] },
      data,
      completedAt: string,
      replayed: { type: 'boolean' },
    },
  } as const;
}

const requestData = {
  type: 'object',
  additionalProperties: false,
  required: ['proposalId', 'datasetId', 'status'],
  properties: { proposalId: string, datasetId: string, status: string },
} as const;

const decisionData = {
  type: 'object',
  additionalProperties: false,
  required: ['proposalId', 'status', 'approvalRecordId'],
  properties: { proposalId: string, status: decision, approvalRecordId: string },
} as const;

/** 03 Repair export bundle: the marker, a filename, a fingerprint and three files. */
const bundleData = {
  type: 'object',
  additionalProperties: false,
  required: ['marker', 'filename', 'fingerprint', 'files'],
  properties: {
    marker: { type: 'string', enum: [REPAIR_EXPORT_MARKER] },
    filename: string,
    fingerprint: string,
    files: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'mediaType', 'sha256', 'content'],
        properties: { name: string, mediaType: string, sha256: string, content: string },
      },
    },
  },
} as const;

export const requestReceiptSchema = receiptSchema('repair.request', requestData);
export const decisionReceiptSchema = receiptSchema('repair.decision', decisionData);
export const exportReceiptSchema = receiptSchema('repair.export', bundleData);

/** An operation read: a preview (pending or expired) or one of the three receipts. */
export const operationSchema = {
  anyOf: [previewSchema, requestReceiptSchema, decisionReceiptSchema, exportReceiptSchema],
} as const;
