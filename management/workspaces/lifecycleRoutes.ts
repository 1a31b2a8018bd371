import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { EMPTY_BODY_SCHEMA, workspaceSlugParams } from './schemas.js';

type Change = (
  deps: FastifyInstance['deps'],
  user: ReturnType<typeof sessionOf>,
  slug: string,
) => Promise<{ slug: string; status: string }>;

/** The shared shape of archive and restore: 200 `{workspace: {slug, status}}` (01 Workspace console routes). */
export function lifecycleRoute(app: FastifyInstance, action: 'archive' | 'restore', change: Change): void {
  app.post<{ Params: { workspaceSlug: string } }>(
    `/workspaces/:workspaceSlug/${action}`,
    {
      onRequest: [sessionAuth()],
      config: { validationError: 'invalid_request', errors: ['workspace_not_found', 'workspace_unavailable', 'forbidden'] },
      schema: {
        params: workspaceSlugParams,
        body: EMPTY_BODY_SCHEMA,
        response: {
          200: {
            type: 'object',
            required: ['workspace'],
            properties: {
              workspace: {
                type: 'object',
                required: ['slug', 'status'],
                properties: { slug: { type: 'string' }, status: { type: 'string', enum: ['active', 'archived'] } },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const workspace = await change(app.deps, sessionOf(request), request.params.workspaceSlug);
      return reply.send({ workspace });
    },
  );
}
