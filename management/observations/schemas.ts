/**
 * JSON Schemas of the observation reads and connection analytics (00-decisions §5; fields in
 * docs/decisions/analysis.md). Responses are serialised from them, so nothing unlisted can leave.
 * Query members are strings (nothing is coerced); an unknown or repeated member fails the schema.
 */

const nullableString = { type: ['string', 'null'] } as const;
const queryString = { type: 'string' } as const;

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    integrationId: queryString,
    limit: queryString,
    cursor: queryString,
    from: queryString,
    to: queryString,
    eventType: queryString,
    operationKey: queryString,
    status: queryString,
  },
} as const;

export const detailQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { integrationId: queryString },
} as const;

export const eventIdParams = {
  type: 'object',
  required: ['eventId'],
  properties: { eventId: { type: 'string' } },
} as const;

const observationProperties = {
  eventId: { type: 'string' },
  connectionId: { type: 'string' },
  integrationId: { type: 'string' },
  eventType: { type: 'string' },
  operationKey: { type: 'string' },
  method: { type: 'string' },
  routeTemplate: { type: 'string' },
  payloadLocation: { type: 'string' },
  statusCode: { type: 'integer' },
  durationMs: { type: 'number' },
  attempt: { type: 'integer' },
  occurredAt: { type: 'string' },
  receivedAt: { type: 'string' },
  envelopeVersion: { type: 'string' },
  schemaInspected: { type: 'boolean' },
  schemaFingerprint: { type: 'string' },
  observedFingerprint: nullableString,
  shapeHash: { type: 'string' },
  redactionPolicyVersion: { type: 'string' },
  correlation: {
    type: 'object',
    required: ['sourceEventIdHash', 'idempotencyKeyHash', 'hashNamespace'],
    properties: { sourceEventIdHash: nullableString, idempotencyKeyHash: nullableString, hashNamespace: nullableString },
  },
  outcome: {
    type: 'object',
    required: ['accepted', 'businessObjectType', 'businessObjectIdHash'],
    properties: { accepted: { type: 'boolean' }, businessObjectType: nullableString, businessObjectIdHash: nullableString },
  },
} as const;

const observationRequired = Object.keys(observationProperties);

export const observationSchema = {
  type: 'object',
  required: observationRequired,
  properties: observationProperties,
} as const;

export const listResponse = {
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: { items: { type: 'array', items: observationSchema }, nextCursor: nullableString },
} as const;

export const detailResponse = {
  type: 'object',
  required: ['observation'],
  properties: {
    observation: {
      type: 'object',
      required: [...observationRequired, 'schemaShape'],
      // The shape tree is open-ended by nature (00-decisions §5 node kinds, any depth).
      properties: { ...observationProperties, schemaShape: { type: 'object', additionalProperties: true } },
    },
  },
} as const;

export const analyticsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { from: queryString, to: queryString, bucket: queryString },
} as const;

const nullableNumber = { type: ['number', 'null'] } as const;

const statusClassesSchema = {
  type: 'object',
  required: ['1xx', '2xx', '3xx', '4xx', '5xx', 'transport_error'],
  properties: {
    '1xx': { type: 'integer' },
    '2xx': { type: 'integer' },
    '3xx': { type: 'integer' },
    '4xx': { type: 'integer' },
    '5xx': { type: 'integer' },
    transport_error: { type: 'integer' },
  },
} as const;

const analyticsCellProperties = {
  count: { type: 'integer' },
  statusClasses: statusClassesSchema,
  operations: {
    type: 'array',
    items: {
      type: 'object',
      required: ['operationKey', 'count'],
      properties: { operationKey: { type: 'string' }, count: { type: 'integer' } },
    },
  },
  durationMs: {
    type: 'object',
    required: ['p50', 'p95', 'p99'],
    properties: { p50: nullableNumber, p95: nullableNumber, p99: nullableNumber },
  },
} as const;

export const analyticsResponse = {
  type: 'object',
  required: ['connectionId', 'from', 'to', 'bucket', 'quantiles', 'totals', 'buckets'],
  properties: {
    connectionId: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    bucket: { type: 'string', enum: ['minute', 'hour', 'day'] },
    quantiles: { type: 'string', enum: ['exact'] },
    totals: { type: 'object', required: Object.keys(analyticsCellProperties), properties: analyticsCellProperties },
    buckets: {
      type: 'array',
      items: {
        type: 'object',
        required: ['start', ...Object.keys(analyticsCellProperties)],
        properties: { start: { type: 'string' }, ...analyticsCellProperties },
      },
    },
  },
} as const;
