import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { listInventory, type InventoryQuery } from './integrationInventory.js';
import { compatibilityItemSchema, integrationSchema } from './schemas.js';

const querySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    view: { type: 'string', enum: ['canonical'] },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    environmentId: { type: 'string' },
  },
} as const;

/**
 * GET /v1/integrations (01 Integration and connection reads): `view=canonical` lists shared
 * Integrations with both mode slots; without `view`, the compatibility inventory lists
 * connections (Versioning 3), legacy workspaces included.
 */
export default async function listIntegrationsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: InventoryQuery }>(
    '/v1/integrations',
    {
      onRequest: [workspaceAuth('integrations:read', { cli: 'allow' })],
      config: {
        validationError: 'invalid_inventory_query',
        errors: ['invalid_inventory_query', 'invalid_inventory_cursor', 'workspace_modes_unavailable'],
      },
      schema: {
        querystring: querySchema,
        response: {
          200: {
            type: 'object',
            required: ['model', 'items', 'nextCursor'],
            properties: {
              model: { type: 'string' },
              // The two item forms share no required field set, so each item matches one of them.
              items: { type: 'array', items: { anyOf: [integrationSchema, compatibilityItemSchema] } },
              nextCursor: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const page = await listInventory(app.deps, principalOf(request), request.query);
      return reply.send(page);
    },
  );
}
