import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { listBillingAccounts } from './billingService.js';

const accountSchema = {
  type: 'object',
  required: ['id', 'name', 'plan', 'status', 'role', 'activeWorkspaceCount', 'workspaceLimit'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    plan: { type: 'string' },
    status: { type: 'string', enum: ['active', 'suspended'] },
    role: { type: 'string', enum: ['owner', 'admin'] },
    activeWorkspaceCount: { type: 'integer' },
    workspaceLimit: { type: ['integer', 'null'] },
  },
} as const;

/** GET /billing-accounts: accounts the user owns or administers (01 Workspace console routes). */
export default function listBillingAccountsRoute(app: FastifyInstance): void {
  app.get(
    '/billing-accounts',
    {
      onRequest: [sessionAuth()],
      config: { errors: [] },
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: { 200: { type: 'object', required: ['accounts'], properties: { accounts: { type: 'array', items: accountSchema } } } },
      },
    },
    async (request, reply) => {
      const accounts = await listBillingAccounts(app.deps, sessionOf(request).userId);
      return reply.send({ accounts });
    },
  );
}
