import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { previewConsoleCompensation } from './consoleConfigurationService.js';
import { emptyBody, noQuery, operationParams, reviewSchema } from './schemas.js';

/** POST /workspaces/{workspaceSlug}/configuration-operations/{operationId}/compensation-preview (02): 201 compensation review. */
export default async function consolePreviewCompensationRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; operationId: string } }>(
    '/workspaces/:workspaceSlug/configuration-operations/:operationId/compensation-preview',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_configuration_request',
        errors: [
          'workspace_not_found',
          'workspace_unavailable',
          'forbidden',
          'operation_not_found',
          'integration_not_found',
          'configuration_compensation_unavailable',
          'rate_limited',
        ],
      },
      schema: { params: operationParams, querystring: noQuery, body: emptyBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      const review = await previewConsoleCompensation(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        request.params.operationId,
      );
      return reply.code(201).send(review);
    },
  );
}
