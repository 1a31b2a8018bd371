import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readConsoleConfigurationOperation } from './consoleConfigurationService.js';
import { noQuery, operationParams, statusSchema } from './schemas.js';

/** GET /workspaces/{workspaceSlug}/configuration-operations/{operationId} (02): the user's review or completed receipt. */
export default async function consoleGetOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { workspaceSlug: string; operationId: string } }>(
    '/workspaces/:workspaceSlug/configuration-operations/:operationId',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_configuration_request',
        errors: ['workspace_not_found', 'workspace_unavailable', 'forbidden', 'operation_not_found'],
      },
      schema: { params: operationParams, querystring: noQuery, response: { 200: statusSchema } },
    },
    async (request, reply) => {
      const status = await readConsoleConfigurationOperation(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        request.params.operationId,
      );
      return reply.send(status);
    },
  );
}
