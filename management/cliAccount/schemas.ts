/**
 * JSON Schemas of the CLI account routes (03 "Identity, workspace and session records", Account
 * routes). Responses are serialised from them, so no token or hash can leave the service; every
 * response object carries `schemaVersion: 1` (03 Versioning 1).
 */
import { schemaVersionSchema as schemaVersion } from '../auth/cliApi.js';

export const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

/** `limit` and `cursor` as raw strings; their values are checked by the service. */
export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string' }, cursor: { type: 'string' } },
} as const;

export const clientParams = {
  type: 'object',
  required: ['clientId'],
  additionalProperties: false,
  properties: { clientId: { type: 'string' } },
} as const;

export const identityResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'user', 'scopes'],
  properties: {
    schemaVersion,
    user: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'name'],
      properties: { id: { type: 'string' }, name: { type: 'string' } },
    },
    scopes: { type: 'array', items: { type: 'string' } },
  },
} as const;

const workspaceItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'slug', 'name', 'role'],
  properties: {
    id: { type: 'string' },
    slug: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ['owner', 'admin', 'viewer'] },
  },
} as const;

const sessionItem = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'scopes', 'createdAt', 'lastUsedAt', 'current'],
  properties: {
    id: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string' },
    lastUsedAt: { type: ['string', 'null'] },
    current: { type: 'boolean' },
  },
} as const;

const pageOf = (item: object) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['schemaVersion', 'items', 'nextCursor'],
    properties: { schemaVersion, items: { type: 'array', items: item }, nextCursor: { type: ['string', 'null'] } },
  }) as const;

export const workspaceListResponse = pageOf(workspaceItem);
export const sessionListResponse = pageOf(sessionItem);

export const revokedResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['schemaVersion', 'revoked'],
  properties: { schemaVersion, revoked: { type: 'boolean', enum: [true] } },
} as const;
