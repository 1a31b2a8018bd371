import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import type { CopyPreviewBody } from '../configurationService.js';
import { previewConsoleCopy } from './consoleConfigurationService.js';
import { connectionParams, copyPreviewBody, noQuery, reviewSchema } from './schemas.js';

/** POST /workspaces/{workspaceSlug}/connections/{connectionId}/configuration-copy/preview (02): 201 copy review. */
export default async function consolePreviewCopyRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; connectionId: string }; Body: CopyPreviewBody }>(
    '/workspaces/:workspaceSlug/connections/:connectionId/configuration-copy/preview',
    {
      // sessionAuth checks CSRF and the write pause.
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_configuration_request',
        errors: [
          'workspace_not_found',
          'workspace_unavailable',
          'forbidden',
          'connection_not_found',
          'integration_not_found',
          'configuration_selection_invalid',
          'configuration_scope_mismatch',
          'configuration_destination_conflict',
          'configuration_snapshot_too_large',
          'workspace_modes_unavailable',
          'rate_limited',
        ],
      },
      schema: { params: connectionParams, querystring: noQuery, body: copyPreviewBody, response: { 201: reviewSchema } },
    },
    async (request, reply) => {
      const review = await previewConsoleCopy(
        app.deps,
        sessionOf(request),
        request.params.workspaceSlug,
        request.params.connectionId,
        request.body,
      );
      return reply.code(201).send(review);
    },
  );
}
