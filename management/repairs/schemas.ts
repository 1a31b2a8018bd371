/**
 * JSON Schemas of the repair routes (03 "Repair proposal", "Replay dataset and run", "CLI
 * operation receipt", Evidence reads, Reviewed repairs). Responses are serialised from them, so
 * nothing unlisted (candidates, fixtures, requester, internal ids) leaves the service; CLI
 * responses carry `schemaVersion: 1` (03 Versioning 1).
 */
import { schemaVersionSchema as schemaVersion } from '../auth/cliApi.js';

const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const modeSchema = { type: 'string', enum: ['sandbox', 'live'] } as const;
const proposalStatus = {
  type: 'string',
  enum: ['queued', 'generating', 'validating', 'awaiting_approval', 'approved', 'rejected', 'failed'],
} as const;

function params<const K extends string>(...names: K[]) {
  return {
    type: 'object',
    required: names,
    additionalProperties: false,
    properties: Object.fromEntries(names.map((name) => [name, str])) as Record<K, typeof str>,
  } as const;
}

export const incidentParams = params('connectionId', 'incidentId');
export const proposalParams = params('connectionId', 'proposalId');
export const datasetParams = params('connectionId', 'datasetId');
export const runParams = params('connectionId', 'runId');
export const proposalIdParams = params('proposalId');

/** Single reads accept no query parameters (03 Evidence reads). */
export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

/** The raw list query: strings only (nothing coerced); values are checked by the service. */
export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: str, cursor: str },
} as const;

/** GET /v1/repair-proposals/{id}: `mode` is required (checked by the service, as the incident read's). */
export const modeQuery = { type: 'object', additionalProperties: false, properties: { mode: str } } as const;

/** 03 Reviewed repairs: body `{}` or `{datasetId}`; anything else is 400 `invalid_repair_request`. */
export const repairRequestBody = {
  type: 'object',
  additionalProperties: false,
  properties: { datasetId: str },
} as const;

/** 03 Decision preview `review.validation`. */
const validationSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['id', 'valid', 'replayPassed', 'replayRunId', 'replayStatus', 'adapterFingerprint', 'schemaChecksFingerprint'],
  properties: {
    id: str,
    valid: { type: 'boolean' },
    replayPassed: { type: 'boolean' },
    replayRunId: nullableStr,
    replayStatus: nullableStr,
    adapterFingerprint: nullableStr,
    schemaChecksFingerprint: nullableStr,
  },
} as const;

const decisionSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['status', 'approvalRecordId', 'decidedAt'],
  properties: { status: { type: 'string', enum: ['approved', 'rejected'] }, approvalRecordId: str, decidedAt: str },
} as const;

/** 03 "Repair proposal" read. */
export const proposalSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'incidentId',
    'connectionId',
    'mode',
    'environmentId',
    'status',
    'createdAt',
    'updatedAt',
    'errorCode',
    'validation',
    'decision',
  ],
  properties: {
    id: str,
    incidentId: str,
    connectionId: str,
    mode: modeSchema,
    environmentId: str,
    status: proposalStatus,
    createdAt: str,
    updatedAt: str,
    errorCode: nullableStr,
    validation: validationSchema,
    decision: decisionSchema,
  },
} as const;

/** 03 "Repair proposal" list item. */
const proposalItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'datasetId', 'validationRunId', 'createdAt', 'updatedAt', 'errorCode'],
  properties: {
    id: str,
    status: proposalStatus,
    datasetId: nullableStr,
    validationRunId: nullableStr,
    createdAt: str,
    updatedAt: str,
    errorCode: nullableStr,
  },
} as const;

/** 03 "Replay dataset": no fixtures. */
const datasetSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'incidentId', 'connectionId', 'mode', 'manifestHash', 'fixtureCount', 'redactionPolicyVersion', 'createdAt'],
  properties: {
    id: str,
    incidentId: str,
    connectionId: str,
    mode: modeSchema,
    manifestHash: str,
    fixtureCount: { type: 'integer' },
    redactionPolicyVersion: str,
    createdAt: str,
  },
} as const;

/** 03 "Replay run": no executable inputs or raw results. */
const runSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'datasetId',
    'connectionId',
    'mode',
    'status',
    'adapterFingerprint',
    'adapterVersion',
    'errorCode',
    'queuedAt',
    'startedAt',
    'finishedAt',
  ],
  properties: {
    id: str,
    datasetId: str,
    connectionId: str,
    mode: modeSchema,
    status: { type: 'string', enum: ['passed', 'failed'] },
    adapterFingerprint: str,
    adapterVersion: str,
    errorCode: nullableStr,
    queuedAt: str,
    startedAt: str,
    finishedAt: str,
  },
} as const;

/** 03 "CLI operation receipt" of `repair.request`. */
export const repairRequestReceiptResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'operationId', 'action', 'targetId', 'connectionId', 'status', 'data', 'completedAt', 'replayed'],
  properties: {
    schemaVersion,
    operationId: str,
    action: { type: 'string', enum: ['repair.request'] },
    targetId: str,
    connectionId: str,
    status: { type: 'string', enum: ['completed'] },
    data: {
      type: 'object',
      additionalProperties: false,
      required: ['proposalId', 'datasetId', 'status'],
      properties: { proposalId: str, datasetId: str, status: { type: 'string', enum: ['queued'] } },
    },
    completedAt: str,
    replayed: { type: 'boolean' },
  },
} as const;

export const cliProposalResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'proposal'],
  properties: { schemaVersion, proposal: proposalSchema },
} as const;

/** The API key read (00-decisions §5) has the `/v1` incident read's envelope: no schemaVersion. */
export const proposalResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['proposal'],
  properties: { proposal: proposalSchema },
} as const;

export const proposalListResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'items', 'nextCursor'],
  properties: { schemaVersion, items: { type: 'array', items: proposalItemSchema }, nextCursor: nullableStr },
} as const;

export const datasetListResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'items', 'nextCursor'],
  properties: { schemaVersion, items: { type: 'array', items: datasetSchema }, nextCursor: nullableStr },
} as const;

export const datasetResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'dataset'],
  properties: { schemaVersion, dataset: datasetSchema },
} as const;

export const runResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'run'],
  properties: { schemaVersion, run: runSchema },
} as const;
