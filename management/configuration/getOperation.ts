import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readConfigurationOperation } from './configurationService.js';
import { noQuery, operationParams, statusSchema } from './schemas.js';

/** GET /v1/configuration-operations/{operationId} (02): the pending or expired review, or the completed receipt. */
export default async function getOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/configuration-operations/:operationId',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'allow' })],
      config: { validationError: 'invalid_configuration_request', errors: ['operation_not_found'] },
      schema: { params: operationParams, querystring: noQuery, response: { 200: statusSchema } },
    },
    async (request, reply) => {
      const status = await readConfigurationOperation(app.deps, principalOf(request), request.params.operationId);
      return reply.send(status);
    },
  );
}
