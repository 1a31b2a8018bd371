import { WORKSPACE_SCOPES } from '../auth/scopes.js';

export const apiKeyParams = {
  type: 'object',
  required: ['workspaceSlug', 'id'],
  properties: { workspaceSlug: { type: 'string' }, id: { type: 'string' } },
} as const;

export const scopesSchema = { type: 'array', items: { type: 'string', enum: [...WORKSPACE_SCOPES] } } as const;

/** A listed key: never the key itself or its hash. */
export const apiKeySummarySchema = {
  type: 'object',
  required: ['id', 'name', 'scopes', 'createdAt', 'expiresAt', 'revokedAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    scopes: scopesSchema,
    createdAt: { type: 'string' },
    expiresAt: { type: ['string', 'null'] },
    revokedAt: { type: ['string', 'null'] },
  },
} as const;

/** A created key: the plaintext `key`, shown this once. */
export const createdApiKeySchema = {
  type: 'object',
  required: ['id', 'name', 'key', 'scopes', 'createdAt', 'expiresAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    key: { type: 'string' },
    scopes: scopesSchema,
    createdAt: { type: 'string' },
    expiresAt: { type: ['string', 'null'] },
  },
} as const;
