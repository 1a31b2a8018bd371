/**
 * JSON Schemas of the CLI evidence reads (03 "Connection verification", "Incident", Evidence
 * reads). Responses are serialised from them, so nothing unlisted leaves the service; every
 * response object carries `schemaVersion: 1` (03 Versioning 1).
 */
import { schemaVersionSchema as schemaVersion } from '../auth/cliApi.js';
import { incidentDetailSchema, incidentSchema } from '../incidents/schemas.js';

export const connectionParams = {
  type: 'object',
  required: ['connectionId'],
  additionalProperties: false,
  properties: { connectionId: { type: 'string' } },
} as const;

export const incidentParams = {
  type: 'object',
  required: ['connectionId', 'incidentId'],
  additionalProperties: false,
  properties: { connectionId: { type: 'string' }, incidentId: { type: 'string' } },
} as const;

/** Verification and single reads accept no query parameters (03 Evidence reads). */
export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

/** The raw list query: strings only (nothing coerced); values are checked by the service. */
export const incidentListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  },
} as const;

export const verificationResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'connectionId', 'mode', 'credentialStatus', 'activeContractVersionId', 'hasObservations', 'latestObservedAt'],
  properties: {
    schemaVersion,
    connectionId: { type: 'string' },
    mode: { type: 'string', enum: ['sandbox', 'live'] },
    credentialStatus: { type: 'string', enum: ['active', 'revoked', 'missing'] },
    activeContractVersionId: { type: ['string', 'null'] },
    hasObservations: { type: 'boolean' },
    latestObservedAt: { type: ['string', 'null'] },
  },
} as const;

export const incidentListResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'mode', 'items', 'nextCursor'],
  properties: {
    schemaVersion,
    mode: { type: 'string', enum: ['sandbox', 'live'] },
    items: { type: 'array', items: incidentSchema },
    nextCursor: { type: ['string', 'null'] },
  },
} as const;

export const incidentDetailResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'incident'],
  properties: { schemaVersion, incident: incidentDetailSchema },
} as const;
