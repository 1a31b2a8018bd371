/** JSON Schemas of the console second-mode setup routes: the API's, with the workspace slug. */

export { applyBody, firstReceiptSchema, noQuery, previewBody, receiptSchema, reviewSchema, statusSchema } from '../schemas.js';

export const integrationParams = {
  type: 'object',
  required: ['workspaceSlug', 'workspaceIntegrationId'],
  properties: { workspaceSlug: { type: 'string' }, workspaceIntegrationId: { type: 'string' } },
  additionalProperties: false,
} as const;

export const operationParams = {
  type: 'object',
  required: ['workspaceSlug', 'operationId'],
  properties: { workspaceSlug: { type: 'string' }, operationId: { type: 'string' } },
  additionalProperties: false,
} as const;
