/** JSON Schemas of the console rule routes (02 "Console rule routes (browser session)"). */

import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { connectionParams, operationParams, receiptSchema, ruleParams, ruleSchema } from '../schemas.js';

export { createBody, deleteBody, listQuery, noQuery, updateBody } from '../schemas.js';

export const expectedOutcomesParams = withWorkspaceSlug(connectionParams);
export const expectedOutcomeParams = withWorkspaceSlug(ruleParams);
export const ruleOperationParams = withWorkspaceSlug(operationParams);

/** The console read: the displayed revision, mode, Integration name, management permission and the rules. */
export const expectedOutcomesResponse = {
  type: 'object',
  required: [
    'connectionId',
    'workspaceIntegrationId',
    'integrationName',
    'mode',
    'environment',
    'revision',
    'managementPermission',
    'expectedOutcomes',
    'nextCursor',
  ],
  properties: {
    connectionId: { type: 'string' },
    workspaceIntegrationId: { type: 'string' },
    integrationName: { type: 'string' },
    mode: { type: 'string', enum: ['sandbox', 'live'] },
    environment: {
      type: 'object',
      required: ['id', 'category', 'mode'],
      properties: { id: { type: 'string' }, category: { type: 'string' }, mode: { type: 'string', enum: ['sandbox', 'live'] } },
    },
    revision: { type: 'string' },
    managementPermission: { type: 'boolean' },
    expectedOutcomes: { type: 'array', items: ruleSchema },
    nextCursor: { type: ['string', 'null'] },
  },
} as const;

/** A console mutation: the rule as it now stands (the removed one for delete) and its completed operation. */
export const expectedOutcomeMutationResponse = {
  type: 'object',
  required: ['expectedOutcome', 'operation'],
  properties: { expectedOutcome: ruleSchema, operation: receiptSchema },
} as const;

export { receiptSchema };
