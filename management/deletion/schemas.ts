/**
 * JSON Schemas of the reviewed deletion routes (03 "Integration deletion": routes and bodies not
 * shown; docs/decisions/integrations.md "Reviewed deletion"). Responses are serialised from them,
 * so only the listed snapshot, evidence and receipt members can leave the service.
 */
import { FINGERPRINT_PATTERN } from '../../shared/fingerprint.js';
import { credentialStateSchema } from '../credentials/schemas.js';
import { CREDENTIAL_STATUSES, DIRECTIONS, MODES, PROTOCOLS } from '../integrations/schemas.js';

export { emptyBody as previewBody } from '../configuration/schemas.js';
export { noQuery, operationParams } from '../rules/schemas.js';

const string = { type: 'string' } as const;
const nullableString = { type: ['string', 'null'] } as const;

export const integrationParams = {
  type: 'object',
  required: ['workspaceIntegrationId'],
  properties: { workspaceIntegrationId: string },
  additionalProperties: false,
} as const;

export const connectionParams = {
  type: 'object',
  required: ['workspaceIntegrationId', 'connectionId'],
  properties: { workspaceIntegrationId: string, connectionId: string },
  additionalProperties: false,
} as const;

/**
 * The confirmation: which preview (`operationId`, a `del_` id), the Integration's exact name and
 * the preview's fingerprint. A missing, malformed or extra member is 400
 * `invalid_integration_deletion`; a well-formed id or fingerprint that names another review is
 * answered by the service (404, 409).
 */
export const confirmBody = {
  type: 'object',
  required: ['operationId', 'confirmName', 'fingerprint'],
  properties: {
    operationId: { type: 'string', pattern: '^del_[0-9a-hjkmnp-tv-z]{26}$' },
    confirmName: string,
    fingerprint: { type: 'string', pattern: FINGERPRINT_PATTERN.source },
  },
  additionalProperties: false,
} as const;

const action = { type: 'string', enum: ['integration.delete', 'connection.delete'] } as const;

const snapshotSchema = {
  type: 'object',
  required: ['target', 'integration', 'connections', 'fingerprint'],
  properties: {
    target: {
      type: 'object',
      required: ['workspaceIntegrationId', 'connectionId'],
      properties: { workspaceIntegrationId: string, connectionId: nullableString },
    },
    integration: {
      type: 'object',
      required: ['id', 'name', 'provider', 'direction', 'protocol', 'revision'],
      properties: {
        id: string,
        name: string,
        provider: string,
        direction: { type: 'string', enum: DIRECTIONS },
        protocol: { type: 'string', enum: PROTOCOLS },
        revision: string,
      },
    },
    connections: {
      type: 'array',
      items: {
        type: 'object',
        required: ['connectionId', 'mode', 'environmentId', 'revision', 'credentialStatus'],
        properties: {
          connectionId: string,
          mode: { type: 'string', enum: MODES },
          environmentId: string,
          revision: string,
          credentialStatus: { type: 'string', enum: CREDENTIAL_STATUSES },
        },
      },
    },
    fingerprint: string,
  },
} as const;

const evidenceSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['connectionId', 'latestObservationAt', 'openIncidentCount', 'contractVersions', 'rules'],
    properties: {
      connectionId: string,
      latestObservationAt: nullableString,
      openIncidentCount: { type: 'integer' },
      contractVersions: { type: 'integer' },
      rules: { type: 'integer' },
    },
  },
} as const;

const reviewProperties = {
  operationId: string,
  action,
  status: { type: 'string', enum: ['previewed', 'expired'] },
  workspaceIntegrationId: string,
  connectionId: nullableString,
  expiresAt: string,
  fingerprint: string,
  snapshot: snapshotSchema,
  evidence: evidenceSchema,
} as const;

/** The preview response, and a pending or expired review read. */
export const reviewSchema = {
  type: 'object',
  required: [
    'operationId',
    'action',
    'status',
    'workspaceIntegrationId',
    'connectionId',
    'expiresAt',
    'fingerprint',
    'snapshot',
    'evidence',
  ],
  properties: reviewProperties,
} as const;

const receiptProperties = {
  operationId: string,
  action,
  status: { type: 'string', enum: ['completed'] },
  workspaceIntegrationId: string,
  connectionId: nullableString,
  name: string,
  fingerprint: string,
  completedAt: string,
  integrationRevision: string,
  integrationDeleted: { type: 'boolean' },
  credentials: { type: 'array', items: credentialStateSchema },
  replayed: { type: 'boolean' },
  historical: { type: 'boolean' },
} as const;

/** The confirmation's first answer (201), its replay (200) and the completed status read. */
export const receiptSchema = {
  type: 'object',
  required: [
    'operationId',
    'action',
    'status',
    'workspaceIntegrationId',
    'connectionId',
    'name',
    'fingerprint',
    'completedAt',
    'integrationRevision',
    'integrationDeleted',
    'credentials',
    'replayed',
    'historical',
  ],
  properties: receiptProperties,
} as const;

/**
 * The status read answers a review (pending or expired) or the completed receipt: one schema
 * holding both forms' members, each form serialising only its own.
 */
export const statusSchema = {
  type: 'object',
  required: ['operationId', 'action', 'status', 'workspaceIntegrationId', 'connectionId', 'fingerprint'],
  properties: { ...reviewProperties, ...receiptProperties, status: { type: 'string', enum: ['previewed', 'expired', 'completed'] } },
} as const;
