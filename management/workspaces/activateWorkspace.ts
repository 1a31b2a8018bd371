import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { EMPTY_BODY_SCHEMA, workspaceSlugParams } from './schemas.js';
import { activateWorkspace } from './workspaceLifecycle.js';

/** POST /workspaces/{workspaceSlug}/activate → 200 `{workspace: {slug, active: true}}` (docs/decisions/accounts-and-workspaces.md). */
export default function activateWorkspaceRoute(app: FastifyInstance): void {
  app.post<{ Params: { workspaceSlug: string } }>(
    '/workspaces/:workspaceSlug/activate',
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
                required: ['slug', 'active'],
                properties: { slug: { type: 'string' }, active: { type: 'boolean' } },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const workspace = await activateWorkspace(app.deps, sessionOf(request), request.params.workspaceSlug);
      return reply.send({ workspace });
    },
  );
}
