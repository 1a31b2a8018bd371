/**
 * JSON Schemas of the Integration routes' responses (fast-json-stringify serialises from them,
 * so a field not listed here, such as a token hash, can never leave the service).
 */
export const MODES = ['sandbox', 'live'] as const;
export const DIRECTIONS = ['inbound', 'outbound'] as const;
export const PROTOCOLS = ['http-api', 'http-webhook', 'scheduled-feed', 'queue'] as const;
export const CREDENTIAL_STATUSES = ['not_issued', 'active', 'revoked'] as const;

const nullableString = { type: ['string', 'null'] } as const;

/** 01 Integration creation response; `ingestToken` only on the first success. */
export const creationReceiptSchema = {
  type: 'object',
  required: ['operationId', 'replayed', 'credentialRecoveryRequired', 'integration', 'collectorConfiguration'],
  properties: {
    operationId: { type: 'string' },
    replayed: { type: 'boolean' },
    credentialRecoveryRequired: { type: 'boolean' },
    integration: {
      type: 'object',
      required: ['id', 'connectionId', 'mode', 'environmentId'],
      properties: {
        id: { type: 'string' },
        connectionId: { type: 'string' },
        mode: { type: 'string' },
        environmentId: { type: 'string' },
      },
    },
    collectorConfiguration: {
      type: 'object',
      required: ['integrationKey', 'connectionKey'],
      properties: {
        integrationKey: { type: 'string' },
        connectionKey: { type: 'string' },
        ingestToken: { type: 'string' },
      },
    },
  },
} as const;

/** 01 Connection slot: both forms in one schema (the missing form serialises only its three fields). */
const slotSchema = {
  type: 'object',
  required: ['status', 'mode', 'environmentId'],
  properties: {
    status: { type: 'string' },
    mode: { type: 'string' },
    environmentId: { type: 'string' },
    connectionId: { type: 'string' },
    revision: { type: 'string' },
    credentialStatus: { type: 'string' },
    activeContractVersionId: nullableString,
    latestObservationAt: nullableString,
    openIncidentCount: { type: 'integer' },
    observationState: { type: 'string' },
  },
} as const;

/** 01 Integration (shared workflow). */
export const integrationSchema = {
  type: 'object',
  required: ['id', 'name', 'provider', 'direction', 'protocol', 'createdAt', 'revision', 'connections'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    provider: { type: 'string' },
    direction: { type: 'string' },
    protocol: { type: 'string' },
    createdAt: { type: 'string' },
    revision: { type: 'string' },
    connections: {
      type: 'object',
      required: ['sandbox', 'live'],
      properties: { sandbox: slotSchema, live: slotSchema },
    },
  },
} as const;

/** Compatibility inventory item: one connection (decision; 01 leaves the shape open). */
export const compatibilityItemSchema = {
  type: 'object',
  required: [
    'id',
    'workspaceIntegrationId',
    'name',
    'provider',
    'direction',
    'protocol',
    'environmentId',
    'mode',
    'credentialStatus',
    'activeContractVersionId',
  ],
  properties: {
    id: { type: 'string' },
    workspaceIntegrationId: { type: 'string' },
    name: { type: 'string' },
    provider: { type: 'string' },
    direction: { type: 'string' },
    protocol: { type: 'string' },
    environmentId: { type: 'string' },
    mode: { type: 'string' },
    credentialStatus: { type: 'string' },
    activeContractVersionId: nullableString,
  },
} as const;
