import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { EMPTY_BODY_SCHEMA } from '../workspaces/schemas.js';
import { revokeWorkspaceApiKey } from './apiKeyService.js';
import { apiKeyParams } from './schemas.js';

/** DELETE /workspaces/{workspaceSlug}/api-keys/{id} → 200 `{revoked: true}`; effective on the next request. */
export default function deleteApiKeyRoute(app: FastifyInstance): void {
  app.delete<{ Params: { workspaceSlug: string; id: string } }>(
    '/workspaces/:workspaceSlug/api-keys/:id',
    {
      onRequest: [sessionAuth()],
      config: { validationError: 'invalid_request', errors: ['api_key_not_found', 'workspace_not_found', 'forbidden'] },
      schema: {
        params: apiKeyParams,
        body: EMPTY_BODY_SCHEMA,
        response: { 200: { type: 'object', required: ['revoked'], properties: { revoked: { type: 'boolean' } } } },
      },
    },
    async (request, reply) => {
      await revokeWorkspaceApiKey(app.deps, sessionOf(request), request.params.workspaceSlug, request.params.id);
      return reply.send({ revoked: true });
    },
  );
}
