import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readIntegration } from './integrationInventory.js';
import { integrationSchema } from './schemas.js';

/** GET /v1/integrations/{workspaceIntegrationId} (01): private and uncached. */
export default async function getIntegrationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { workspaceIntegrationId: string } }>(
    '/v1/integrations/:workspaceIntegrationId',
    {
      onRequest: [workspaceAuth('integrations:read', { cli: 'allow' })],
      config: { validationError: 'integration_not_found', errors: ['integration_not_found', 'workspace_modes_unavailable'] },
      schema: {
        params: { type: 'object', required: ['workspaceIntegrationId'], properties: { workspaceIntegrationId: { type: 'string' } } },
        response: {
          200: {
            type: 'object',
            required: ['model', 'integration'],
            properties: { model: { type: 'string' }, integration: integrationSchema },
          },
        },
      },
    },
    async (request, reply) => {
      const integration = await readIntegration(app.deps, principalOf(request), request.params.workspaceIntegrationId);
      return reply.send({ model: 'canonical', integration });
    },
  );
}
