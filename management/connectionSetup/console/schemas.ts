/** JSON Schemas of the console second-mode setup routes: the API's, with the workspace slug. */
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { integrationParams as apiIntegrationParams, operationParams as apiOperationParams } from '../schemas.js';

export { applyBody, firstReceiptSchema, noQuery, previewBody, receiptSchema, reviewSchema, statusSchema } from '../schemas.js';

export const integrationParams = withWorkspaceSlug(apiIntegrationParams);
export const operationParams = withWorkspaceSlug(apiOperationParams);
