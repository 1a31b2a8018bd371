import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { previewCopy, type CopyPreviewBody } from './configurationService.js';
import { connectionParams, copyPreviewBody, noQuery, reviewSchema } from './schemas.js';

/** POST /v1/connections/{connectionId}/configuration-copy/preview (02): 201 copy review. */
export default async function previewCopyRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { connectionId: string }; Body: CopyPreviewBody }>(
    '/v1/connections/:connectionId/configuration-copy/preview',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'allow' }), rejectPausedWrite],
      config: {
        validationError: 'invalid_configuration_request',
        errors: [
          'connection_not_found',
          'integration_not_found',
          'configuration_selection_invalid',
          'configuration_scope_mismatch',
          'configuration_destination_conflict',
          'configuration_snapshot_too_large',
          'workspace_unavailable',
          'workspace_modes_unavailable',
          'rate_limited',
        ],
      },
      schema: { params: connectionParams, querystring: noQuery, body: copyPreviewBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      const review = await previewCopy(app.deps, principalOf(request), request.params.connectionId, request.body);
      return reply.code(201).send(review);
    },
  );
}
