import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { accountUsage } from './billingService.js';

const usageSchema = {
  type: 'object',
  required: ['accountId', 'period', 'periodStart', 'resetAt', 'mode', 'total', 'limit', 'remaining', 'workspaces'],
  properties: {
    accountId: { type: 'string' },
    period: { type: 'string' },
    periodStart: { type: 'string' },
    resetAt: { type: 'string' },
    mode: { type: 'string', enum: ['sandbox'] },
    total: { type: 'integer' },
    limit: { type: 'integer' },
    remaining: { type: 'integer' },
    workspaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['workspaceId', 'slug', 'total'],
        properties: { workspaceId: { type: 'string' }, slug: { type: 'string' }, total: { type: 'integer' } },
      },
    },
  },
} as const;

/** GET /billing-accounts/{accountId}/usage: the UTC calendar-month Sandbox total, limit and contributions. */
export default function getAccountUsageRoute(app: FastifyInstance): void {
  app.get<{ Params: { accountId: string } }>(
    '/billing-accounts/:accountId/usage',
    {
      onRequest: [sessionAuth()],
      // The id's form is checked by the service (400 `invalid_billing_account_id`); only the query can fail here.
      config: { validationError: 'invalid_request', errors: ['account_not_found', 'invalid_billing_account_id'] },
      schema: {
        params: { type: 'object', required: ['accountId'], properties: { accountId: { type: 'string' } } },
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: { 200: usageSchema },
      },
    },
    async (request, reply) => {
      const usage = await accountUsage(app.deps, sessionOf(request).userId, request.params.accountId);
      return reply.send(usage);
    },
  );
}
