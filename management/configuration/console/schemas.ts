/** JSON Schemas of the console configuration copy and compensation routes: the API's, with the workspace slug. */

export { applyBody, copyPreviewBody, emptyBody, noQuery, receiptSchema, reviewSchema, statusSchema } from '../schemas.js';

export const connectionParams = {
  type: 'object',
  required: ['workspaceSlug', 'connectionId'],
  properties: { workspaceSlug: { type: 'string' }, connectionId: { type: 'string' } },
  additionalProperties: false,
} as const;

export const operationParams = {
  type: 'object',
  required: ['workspaceSlug', 'operationId'],
  properties: { workspaceSlug: { type: 'string' }, operationId: { type: 'string' } },
  additionalProperties: false,
} as const;
