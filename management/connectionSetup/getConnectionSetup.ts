import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { noQuery, operationParams, statusSchema } from './schemas.js';
import { readSetup } from './setupService.js';

/** GET /v1/connection-setup/{operationId} (02): pending or expired review, or the completed receipt. */
export default async function getConnectionSetupRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/connection-setup/:operationId',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' })],
      config: { validationError: 'invalid_connection_setup', errors: ['operation_not_found'] },
      schema: { params: operationParams, querystring: noQuery, response: { 200: statusSchema } },
    },
    async (request, reply) => {
      const status = await readSetup(app.deps, apiKeyPrincipalOf(request), request.params.operationId);
      return reply.send(status);
    },
  );
}
