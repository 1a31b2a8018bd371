import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { integrationParams, noQuery, previewBody, reviewSchema } from './schemas.js';
import { previewSetup, type SetupPreviewBody } from './setupService.js';

/** POST /v1/integrations/{workspaceIntegrationId}/connections/preview (02 "Second-mode setup"): 201 review. */
export default async function previewConnectionSetupRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceIntegrationId: string }; Body: SetupPreviewBody }>(
    '/v1/integrations/:workspaceIntegrationId/connections/preview',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' }), rejectPausedWrite],
      config: {
        validationError: 'invalid_connection_setup',
        errors: [
          'integration_not_found',
          'configuration_scope_mismatch',
          'configuration_selection_invalid',
          'configuration_snapshot_too_large',
          'connection_already_configured',
          'workspace_unavailable',
          'workspace_modes_unavailable',
          'rate_limited',
        ],
      },
      schema: { params: integrationParams, querystring: noQuery, body: previewBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      const review = await previewSetup(app.deps, apiKeyPrincipalOf(request), request.params.workspaceIntegrationId, request.body);
      return reply.code(201).send(review);
    },
  );
}
