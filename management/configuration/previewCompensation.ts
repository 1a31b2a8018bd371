import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { previewCompensation } from './configurationService.js';
import { emptyBody, noQuery, operationParams, reviewSchema } from './schemas.js';

/** POST /v1/configuration-operations/{operationId}/compensation-preview (02): 201 compensation review. */
export default async function previewCompensationRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { operationId: string } }>(
    '/v1/configuration-operations/:operationId/compensation-preview',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'allow' }), rejectPausedWrite],
      config: {
        validationError: 'invalid_configuration_request',
        errors: [
          'operation_not_found',
          'integration_not_found',
          'configuration_compensation_unavailable',
          'workspace_unavailable',
          'rate_limited',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: emptyBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      const review = await previewCompensation(app.deps, principalOf(request), request.params.operationId);
      return reply.code(201).send(review);
    },
  );
}
