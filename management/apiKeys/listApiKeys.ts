import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { workspaceSlugParams } from '../workspaces/schemas.js';
import { listWorkspaceApiKeys } from './apiKeyService.js';
import { apiKeySummarySchema } from './schemas.js';

/** GET /workspaces/{workspaceSlug}/api-keys (00-decisions §3): owner or admin; no key material. */
export default function listApiKeysRoute(app: FastifyInstance): void {
  app.get<{ Params: { workspaceSlug: string } }>(
    '/workspaces/:workspaceSlug/api-keys',
    {
      onRequest: [sessionAuth()],
      config: { validationError: 'invalid_request', errors: ['workspace_not_found', 'forbidden'] },
      schema: {
        params: workspaceSlugParams,
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: {
          200: { type: 'object', required: ['apiKeys'], properties: { apiKeys: { type: 'array', items: apiKeySummarySchema } } },
        },
      },
    },
    async (request, reply) => {
      const apiKeys = await listWorkspaceApiKeys(app.deps, sessionOf(request), request.params.workspaceSlug);
      return reply.send({ apiKeys });
    },
  );
}
