/**
 * JSON Schemas of the incident reads (03 "Incident"; 00-decisions §5 "Incident and repair reads
 * for API keys"). Responses are serialised from them by fast-json-stringify, so nothing unlisted
 * (the workspace, the Integration row, the contract version that produced the findings) can leave
 * the service: the detail is redacted by construction.
 */

const timestamp = { type: 'string' } as const;
const nullableTimestamp = { type: ['string', 'null'] } as const;

/**
 * The raw query of GET /v1/incidents. Every member is a plain string here (nothing is coerced);
 * which are required and which values they take is checked by the service, so that a missing
 * connection answers `connection_required` rather than the generic query error.
 */
export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    integrationId: { type: 'string' },
    mode: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  },
} as const;

/** The raw query of GET /v1/incidents/{incidentId}: only `mode`, checked by the service. */
export const detailQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { mode: { type: 'string' } },
} as const;

export const incidentParams = {
  type: 'object',
  required: ['incidentId'],
  properties: { incidentId: { type: 'string' } },
  additionalProperties: false,
} as const;

/** 03 Incident list item fields, plus `operationKey` (docs/decisions/analysis.md). */
const incidentProperties = {
  id: { type: 'string' },
  connectionId: { type: 'string' },
  mode: { type: 'string' },
  environmentId: { type: 'string' },
  operationKey: { type: 'string' },
  kind: { type: 'string' },
  status: { type: 'string' },
  summary: { type: 'string' },
  affectedRecords: { type: 'integer' },
  resolutionState: { type: 'string' },
  firstObservedAt: timestamp,
  lastObservedAt: timestamp,
  createdAt: timestamp,
  updatedAt: timestamp,
  resolvedAt: nullableTimestamp,
} as const;

const INCIDENT_FIELDS = Object.keys(incidentProperties) as (keyof typeof incidentProperties)[];

export const incidentSchema = {
  type: 'object',
  additionalProperties: false,
  required: INCIDENT_FIELDS,
  properties: incidentProperties,
} as const;

/** One distinct (kind, path) of an incident; `forbidden` only on `undeclared_field`. */
export const findingSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'path', 'expected', 'observed', 'observationCount', 'firstObservedAt', 'lastObservedAt'],
  properties: {
    kind: { type: 'string' },
    path: { type: 'string' },
    expected: { type: 'string' },
    observed: { type: 'string' },
    forbidden: { type: 'boolean' },
    observationCount: { type: 'integer' },
    firstObservedAt: timestamp,
    lastObservedAt: timestamp,
  },
} as const;

/** 03 Incident detail: the list item plus `findings`, `observationIds`, `evidenceTruncated`. */
export const incidentDetailSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...INCIDENT_FIELDS, 'findings', 'observationIds', 'evidenceTruncated'],
  properties: {
    ...incidentProperties,
    findings: { type: 'array', items: findingSchema },
    observationIds: { type: 'array', items: { type: 'string' } },
    evidenceTruncated: { type: 'boolean' },
  },
} as const;

export const listResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['mode', 'items', 'nextCursor'],
  properties: {
    mode: { type: 'string' },
    items: { type: 'array', items: incidentSchema },
    nextCursor: { type: ['string', 'null'] },
  },
} as const;

export const detailResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['incident'],
  properties: { incident: incidentDetailSchema },
} as const;
