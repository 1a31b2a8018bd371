import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import type { SetupPreviewBody } from '../setupService.js';
import { previewConsoleSetup } from './consoleSetupService.js';
import { integrationParams, noQuery, previewBody, reviewSchema } from './schemas.js';

/** POST /workspaces/{workspaceSlug}/integrations/{workspaceIntegrationId}/connections/preview (02): 201 review. */
export default async function consolePreviewConnectionSetupRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; workspaceIntegrationId: string }; Body: SetupPreviewBody }>(
    '/workspaces/:workspaceSlug/integrations/:workspaceIntegrationId/connections/preview',
    {
      // sessionAuth checks CSRF and the write pause.
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_connection_setup',
        errors: [
          'workspace_not_found',
          'workspace_unavailable',
          'forbidden',
          'integration_not_found',
          'configuration_scope_mismatch',
          'configuration_selection_invalid',
          'configuration_snapshot_too_large',
          'connection_already_configured',
          'workspace_modes_unavailable',
          'rate_limited',
        ],
      },
      schema: { params: integrationParams, querystring: noQuery, body: previewBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      const review = await previewConsoleSetup(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        request.params.workspaceIntegrationId,
        request.body,
      );
      return reply.code(201).send(review);
    },
  );
}
