import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readAsWorkspaceManager } from '../../configuration/console/consoleActor.js';
import { consoleOperationActor } from '../../repairs/repairActor.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { readRepairOperation } from '../operationStatus.js';
import { noQuery, operationSchema } from '../schemas.js';

const params = withWorkspaceSlug({ required: ['operationId'], properties: { operationId: { type: 'string' } } });

/**
 * GET /workspaces/{workspaceSlug}/repair-operations/{operationId}: the CLI's operation read (03
 * Reviewed repairs) for the signed-in owner or admin: their console preview (pending or expired)
 * or retained receipt. The role stands for the CLI's scopes. In an archived workspace only a
 * completed receipt is answered (02), a preview is 409 `workspace_unavailable`.
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
      const operation = await readAsWorkspaceManager(app.deps, sessionOf(request), request.params.workspaceSlug, (actor) =>
        readRepairOperation(app.deps, consoleOperationActor(actor), () => true, request.params.operationId),
      );
      return reply.send(operation);
    },
  );
}
