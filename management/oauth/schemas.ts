/**
 * JSON Schemas of the OAuth routes. The RFC endpoints (device code, token, revoke) take form or
 * JSON bodies of string parameters and ignore parameters they do not know (RFC 6749 §3.1, §3.2,
 * RFC 8628 §3.1); their missing parameters are checked by the services, so that each gets the
 * RFC's error (`invalid_client`, `invalid_scope`) rather than a schema failure. A repeated
 * parameter (RFC 6749 §3.1: must not be) arrives as an array and fails the schema: `invalid_request`.
 */

const parameter = (maxLength: number) => ({ type: 'string', maxLength }) as const;

export const deviceCodeBody = {
  type: 'object',
  properties: { client_id: parameter(256), scope: parameter(4096), connection_id: parameter(256) },
} as const;

export const deviceAuthorizationResponse = {
  type: 'object',
  required: ['device_code', 'user_code', 'verification_uri', 'verification_uri_complete', 'expires_in', 'interval'],
  properties: {
    device_code: { type: 'string' },
    user_code: { type: 'string' },
    verification_uri: { type: 'string' },
    verification_uri_complete: { type: 'string' },
    expires_in: { type: 'integer' },
    interval: { type: 'integer' },
  },
} as const;

/** A user code as typed: case, dashes and spaces are normalised by the service. */
const userCode = parameter(64);

export const deviceAuthorizationQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['user_code'],
  properties: { user_code: userCode },
} as const;

export const deviceAuthorizationView = {
  type: 'object',
  required: ['userCode', 'clientId', 'clientName', 'scopes', 'expiresAt'],
  properties: {
    userCode: { type: 'string' },
    clientId: { type: 'string' },
    clientName: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    expiresAt: { type: 'string' },
    connection: {
      type: 'object',
      required: ['id', 'workspace', 'workspaceIntegrationId', 'integrationName', 'environmentId', 'environmentName', 'mode'],
      properties: {
        id: { type: 'string' },
        workspace: { type: 'string' },
        workspaceIntegrationId: { type: 'string' },
        integrationName: { type: 'string' },
        environmentId: { type: 'string' },
        environmentName: { type: 'string' },
        mode: { type: 'string', enum: ['sandbox', 'live'] },
      },
    },
  },
} as const;

export const consentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['user_code', 'decision'],
  properties: { user_code: userCode, decision: { type: 'string', enum: ['approve', 'deny'] } },
} as const;

export const consentResponse = {
  type: 'object',
  required: ['decision'],
  properties: { decision: { type: 'string', enum: ['approve', 'deny'] } },
} as const;

export const tokenBody = {
  type: 'object',
  properties: {
    grant_type: parameter(256),
    client_id: parameter(256),
    device_code: parameter(256),
    refresh_token: parameter(256),
    scope: parameter(4096),
  },
} as const;

export const tokenResponse = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  properties: {
    access_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer' },
    refresh_token: { type: 'string' },
    scope: { type: 'string' },
  },
} as const;

export const revokeBody = {
  type: 'object',
  properties: { token: parameter(4096), token_type_hint: parameter(256), client_id: parameter(256) },
} as const;

/** RFC 7009 §2.2: the body is not meaningful; `{}` either way, whether or not the token existed. */
export const revokeResponse = { type: 'object', properties: {} } as const;
