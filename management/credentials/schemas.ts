/** JSON Schemas shared by the credential routes (01 Credential state, Credential operation receipt). */

export const connectionParams = {
  type: 'object',
  required: ['connectionId'],
  properties: { connectionId: { type: 'string' } },
  additionalProperties: false,
} as const;

export const credentialStateSchema = {
  type: 'object',
  required: ['connectionId', 'environmentId', 'mode', 'revision', 'status', 'issuedAt', 'revokedAt'],
  properties: {
    connectionId: { type: 'string' },
    environmentId: { type: 'string' },
    mode: { type: 'string', enum: ['sandbox', 'live'] },
    revision: { type: 'string' },
    status: { type: 'string', enum: ['not_issued', 'active', 'revoked'] },
    issuedAt: { type: ['string', 'null'] },
    revokedAt: { type: ['string', 'null'] },
  },
} as const;

const receiptProperties = {
  operationId: { type: 'string' },
  action: { type: 'string', enum: ['issue', 'rotate', 'revoke'] },
  credential: credentialStateSchema,
  connectionKey: { type: 'string' },
  replayed: { type: 'boolean' },
  historical: { type: 'boolean' },
  credentialRecoveryRequired: { type: 'boolean' },
} as const;

const receiptRequired = [
  'operationId',
  'action',
  'credential',
  'connectionKey',
  'replayed',
  'historical',
  'credentialRecoveryRequired',
] as const;

/** A replayed or recovered receipt: no `ingestToken` member exists, so none can be serialised. */
export const credentialReceiptSchema = { type: 'object', required: receiptRequired, properties: receiptProperties } as const;

/** The first response of issue and rotate: the receipt plus the one-time `ingestToken`. */
export const firstCredentialReceiptSchema = {
  type: 'object',
  required: receiptRequired,
  properties: { ...receiptProperties, ingestToken: { type: 'string' } },
} as const;
