import {
  DIRECTIONS,
  ENVELOPE_VERSIONS,
  PAYLOAD_LOCATIONS,
  PROTOCOLS,
  SHAPE_KINDS,
  SHAPE_MAX_DEPTH,
  SHAPE_MAX_FIELD_NAME,
  SHAPE_MAX_FIELDS,
  TRANSPORT_METHODS,
  type EnvelopeVersion,
} from './types.js';

/**
 * JSON Schemas (draft-07, ajv) of the observation envelope per version. Every object is strict
 * (`additionalProperties: false`), so a field of a later version inside an older one is rejected
 * (03 Events 3). `x-issue` is an annotation holding the issue text reported for a violation at
 * that place (03: "each message names one violation"); it does not validate anything.
 */

type Schema = Record<string, unknown>;

export const SCHEMA_SHAPE_ID = 'https://schemas.integration-watch.local/envelope/schema-shape.json';

const FINGERPRINT_PATTERN = '^sha256:[0-9a-f]{64}$';

/** Printable ASCII without spaces, 1 to `max` characters. */
const token = (max: number, issue = `must be 1 to ${max} printable ASCII characters without spaces`): Schema => ({
  type: 'string',
  pattern: `^[\\x21-\\x7E]{1,${max}}$`,
  'x-issue': issue,
});

const LEAF_KINDS = SHAPE_KINDS.filter((kind) => kind !== 'object' && kind !== 'array');

/**
 * One level of the schemaShape tree (00-decisions §5 kinds). Levels are spelled out up to
 * SHAPE_MAX_DEPTH instead of one recursive definition, so the depth is bounded by the schema
 * itself and validation never recurses deeper than that, whatever the body holds.
 */
function shapeLevel(level: number): Schema {
  const last = level === SHAPE_MAX_DEPTH;
  const child = { $ref: `#/definitions/level${level + 1}` };
  if (last) {
    return {
      type: 'object',
      required: ['kind'],
      additionalProperties: false,
      'x-issue': 'must be an object with a kind',
      properties: {
        kind: {
          enum: LEAF_KINDS,
          'x-issue': `must be one of ${LEAF_KINDS.join(', ')}: schemaShape is limited to ${SHAPE_MAX_DEPTH} levels`,
        },
        fields: { not: {}, 'x-issue': `is not allowed: schemaShape is limited to ${SHAPE_MAX_DEPTH} levels` },
        items: { not: {}, 'x-issue': `is not allowed: schemaShape is limited to ${SHAPE_MAX_DEPTH} levels` },
      },
    };
  }
  const fieldsIssue = `must be an object of at most ${SHAPE_MAX_FIELDS} fields whose names have at most ${SHAPE_MAX_FIELD_NAME} characters`;
  return {
    type: 'object',
    required: ['kind'],
    additionalProperties: false,
    'x-issue': 'must be an object with a kind',
    properties: {
      kind: { enum: SHAPE_KINDS, 'x-issue': `must be one of ${SHAPE_KINDS.join(', ')}` },
      fields: {
        type: 'object',
        maxProperties: SHAPE_MAX_FIELDS,
        propertyNames: { maxLength: SHAPE_MAX_FIELD_NAME, 'x-issue': fieldsIssue },
        additionalProperties: child,
        'x-issue': fieldsIssue,
      },
      items: child,
    },
    allOf: [
      { if: { required: ['kind'], properties: { kind: { const: 'object' } } }, then: { required: ['fields'] } },
      {
        if: { required: ['kind'], properties: { kind: { not: { const: 'object' } } } },
        then: { not: { required: ['fields'] }, 'x-issue': 'must not have fields unless its kind is object' },
      },
      {
        if: { required: ['kind'], properties: { kind: { not: { const: 'array' } } } },
        then: { not: { required: ['items'] }, 'x-issue': 'must not have items unless its kind is array' },
      },
    ],
  };
}

function schemaShapeSchema(): Schema {
  const definitions: Record<string, Schema> = {};
  for (let level = 1; level <= SHAPE_MAX_DEPTH; level += 1) definitions[`level${level}`] = shapeLevel(level);
  return { $id: SCHEMA_SHAPE_ID, definitions, $ref: '#/definitions/level1' };
}

/** The schemaShape tree, registered once with ajv and referenced by every envelope version. */
export const SCHEMA_SHAPE_SCHEMA: Schema = schemaShapeSchema();

/**
 * The envelope of one version; `null` gives the schema used when the version itself is invalid
 * (the version is reported and the rest is checked against the newest field list). `shape:
 * 'object'` leaves the schemaShape tree to shapeText.ts (any object passes here).
 */
export function envelopeSchema(version: EnvelopeVersion | null, shape: 'tree' | 'object' = 'tree'): Schema {
  const withInspection = version === null || version === '0.3';
  const payloadProperties: Record<string, Schema> = {
    storage: { enum: ['none'], 'x-issue': 'must be none' },
    schemaFingerprint: {
      type: 'string',
      pattern: FINGERPRINT_PATTERN,
      'x-issue': 'must be sha256: followed by 64 lowercase hex characters',
    },
    schemaShape: shape === 'tree' ? { $ref: SCHEMA_SHAPE_ID } : { type: 'object' },
    redactionPolicyVersion: token(64),
  };
  if (withInspection) payloadProperties.schemaInspected = { type: 'boolean', 'x-issue': 'must be a boolean' };
  return {
    type: 'object',
    additionalProperties: false,
    required: [
      'envelopeVersion',
      'eventId',
      'tenantId',
      'environmentId',
      'integrationId',
      'direction',
      'protocol',
      'occurredAt',
      'operationIdentityVersion',
      'eventType',
      'contract',
      'transport',
      'payload',
      'outcome',
    ],
    properties: {
      envelopeVersion:
        version === null ? { enum: ENVELOPE_VERSIONS, 'x-issue': `must be one of ${ENVELOPE_VERSIONS.join(', ')}` } : { const: version },
      eventId: {
        type: 'string',
        pattern: '^evt_[A-Za-z0-9._:-]{1,124}$',
        'x-issue': 'must be evt_ followed by 1 to 124 letters, digits or . _ : -',
      },
      tenantId: { type: 'string', maxLength: 128, 'x-issue': 'must be a string of at most 128 characters' },
      environmentId: { type: 'string', maxLength: 128, 'x-issue': 'must be a string of at most 128 characters' },
      integrationId: { type: 'string', maxLength: 128, 'x-issue': 'must be a string of at most 128 characters' },
      direction: { enum: DIRECTIONS, 'x-issue': `must be one of ${DIRECTIONS.join(', ')}` },
      protocol: { enum: PROTOCOLS, 'x-issue': `must be one of ${PROTOCOLS.join(', ')}` },
      occurredAt: {
        type: 'string',
        pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$',
        'x-issue': 'must be an ISO 8601 timestamp with a time zone, e.g. 2025-01-31T12:00:00.000Z',
      },
      operationIdentityVersion: { const: '1', 'x-issue': 'must be "1"' },
      eventType: token(128),
      correlation: {
        type: 'object',
        additionalProperties: false,
        'x-issue': 'must be an object',
        properties: { sourceEventIdHash: token(256), idempotencyKeyHash: token(256), hashNamespace: token(128) },
      },
      contract: {
        type: 'object',
        additionalProperties: false,
        required: ['observedFingerprint'],
        'x-issue': 'must be an object',
        properties: {
          observedFingerprint: {
            type: ['string', 'null'],
            pattern: FINGERPRINT_PATTERN,
            'x-issue': 'must be null or sha256: followed by 64 lowercase hex characters',
          },
        },
      },
      transport: {
        type: 'object',
        additionalProperties: false,
        'x-issue': 'must be an object',
        required: ['method', 'routeTemplate', 'payloadLocation', 'statusCode', 'durationMs', 'attempt'],
        properties: {
          method: { enum: TRANSPORT_METHODS, 'x-issue': `must be one of ${TRANSPORT_METHODS.join(', ')}` },
          routeTemplate: token(256),
          payloadLocation: { enum: PAYLOAD_LOCATIONS, 'x-issue': `must be one of ${PAYLOAD_LOCATIONS.join(', ')}` },
          // 03 transport rule 1.
          statusCode: {
            type: 'integer',
            minimum: 0,
            maximum: 599,
            not: { minimum: 1, maximum: 99 },
            'x-issue': 'must be 0 or an integer from 100 through 599',
          },
          durationMs: { type: 'number', minimum: 0, maximum: 86_400_000, 'x-issue': 'must be a number from 0 through 86400000' },
          attempt: { type: 'integer', minimum: 1, maximum: 1000, 'x-issue': 'must be an integer from 1 through 1000' },
        },
      },
      payload: {
        type: 'object',
        additionalProperties: false,
        'x-issue': 'must be an object',
        required: ['storage', 'schemaFingerprint', 'schemaShape', 'redactionPolicyVersion'],
        properties: payloadProperties,
      },
      outcome: {
        type: 'object',
        additionalProperties: false,
        required: ['accepted'],
        'x-issue': 'must be an object',
        properties: {
          accepted: { type: 'boolean', 'x-issue': 'must be a boolean' },
          businessObjectType: token(128),
          businessObjectIdHash: token(256),
        },
      },
    },
  };
}
