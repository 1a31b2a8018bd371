import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { workspaceSummarySchema } from './schemas.js';
import { listWorkspaces } from './workspaceService.js';

/** GET /workspaces: every membership of the signed-in user, archived ones included (01). */
export default function listWorkspacesRoute(app: FastifyInstance): void {
  app.get(
    '/workspaces',
    {
      onRequest: [sessionAuth()],
      config: { errors: [] },
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: {
          200: { type: 'object', required: ['workspaces'], properties: { workspaces: { type: 'array', items: workspaceSummarySchema } } },
        },
      },
    },
    async (request, reply) => {
      const workspaces = await listWorkspaces(app.deps, sessionOf(request).userId);
      return reply.send({ workspaces });
    },
  );
}
