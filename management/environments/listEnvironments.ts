import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { listWorkspaceEnvironments } from './environmentStore.js';

const environmentSchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'category', 'mode', 'isDefault'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    slug: { type: 'string' },
    category: { type: 'string' },
    mode: { type: 'string' },
    isDefault: { type: 'boolean' },
  },
} as const;

/**
 * GET /v1/environments (01 Integration and connection reads): every environment of the key's
 * workspace ordered by id, canonical or legacy; no filter, so any query parameter is refused.
 */
export default async function listEnvironmentsRoute(app: FastifyInstance): Promise<void> {
  app.get(
    '/v1/environments',
    {
      onRequest: [workspaceAuth('integrations:read', { cli: 'allow' })],
      config: { validationError: 'invalid_inventory_query', errors: ['workspace_modes_unavailable'] },
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: {
          200: {
            type: 'object',
            required: ['model', 'environments'],
            properties: { model: { type: 'string' }, environments: { type: 'array', items: environmentSchema } },
          },
        },
      },
    },
    async (request, reply) => {
      const listed = await listWorkspaceEnvironments(app.deps.pool, principalOf(request).workspaceId);
      // The key was current-checked against this workspace a moment ago; a vanished row is a fault.
      if (!listed) throw new AppError('service_unavailable');
      return reply.send(listed);
    },
  );
}
