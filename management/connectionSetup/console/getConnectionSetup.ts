import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readConsoleSetup } from './consoleSetupService.js';
import { noQuery, operationParams, statusSchema } from './schemas.js';

/** GET /workspaces/{workspaceSlug}/connection-setup/{operationId} (02): the user's review or completed receipt. */
export default async function consoleGetConnectionSetupRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { workspaceSlug: string; operationId: string } }>(
    '/workspaces/:workspaceSlug/connection-setup/:operationId',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_connection_setup',
        errors: ['workspace_not_found', 'workspace_unavailable', 'forbidden', 'operation_not_found'],
      },
      schema: { params: operationParams, querystring: noQuery, response: { 200: statusSchema } },
    },
    async (request, reply) => {
      const status = await readConsoleSetup(app.deps, sessionOf(request), request.params.workspaceSlug, request.params.operationId);
      return reply.send(status);
    },
  );
}
