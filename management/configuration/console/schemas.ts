/** JSON Schemas of the console configuration copy and compensation routes: the API's, with the workspace slug. */
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { connectionParams as apiConnectionParams, operationParams as apiOperationParams } from '../schemas.js';

export { applyBody, copyPreviewBody, emptyBody, noQuery, receiptSchema, reviewSchema, statusSchema } from '../schemas.js';

export const connectionParams = withWorkspaceSlug(apiConnectionParams);
export const operationParams = withWorkspaceSlug(apiOperationParams);
