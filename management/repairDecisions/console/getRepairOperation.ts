import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { noQuery, operationSchema } from '../schemas.js';
import { readConsoleRepairOperation } from './consoleOperationRead.js';

const params = withWorkspaceSlug({ required: ['operationId'], properties: { operationId: { type: 'string' } } });

/**
 * GET /workspaces/{workspaceSlug}/repair-operations/{operationId}: the CLI's operation read (03
 * Reviewed repairs) for the signed-in owner or admin: their console preview (pending or expired)
 * or retained receipt (consoleOperationRead.ts). The role stands for the CLI's scopes. In an
 * archived workspace only their completed receipt is answered (02).
 */
export default async function consoleGetRepairOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { workspaceSlug: string; operationId: string } }>(
    '/workspaces/:workspaceSlug/repair-operations/:operationId',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_repair_request',
        errors: ['workspace_not_found', 'forbidden', 'workspace_unavailable', 'operation_not_found', 'authorization_changed'],
      },
      schema: { params, querystring: noQuery, response: { 200: operationSchema } },
    },
    async (request, reply) => {
      const { workspaceSlug, operationId } = request.params;
      const operation = await readConsoleRepairOperation(app.deps, sessionOf(request), workspaceSlug, operationId);
      return reply.send(operation);
    },
  );
}
