import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { workspaceUsage } from './usageService.js';

const usageSchema = {
  type: 'object',
  required: ['workspaceId', 'accountId', 'period', 'periodStart', 'resetAt', 'sandbox', 'live'],
  properties: {
    workspaceId: { type: 'string' },
    accountId: { type: 'string' },
    period: { type: 'string' },
    periodStart: { type: 'string' },
    resetAt: { type: 'string' },
    sandbox: {
      type: 'object',
      required: ['workspaceTotal', 'accountTotal', 'limit', 'remaining', 'quotaEnforced'],
      properties: {
        workspaceTotal: { type: 'integer' },
        accountTotal: { type: 'integer' },
        limit: { type: 'integer' },
        remaining: { type: 'integer' },
        quotaEnforced: { type: 'boolean' },
      },
    },
    live: { type: 'object', required: ['workspaceTotal'], properties: { workspaceTotal: { type: 'integer' } } },
  },
} as const;

/**
 * GET /v1/usage (00-decisions §5): the key's workspace's usage this UTC calendar month. The spec
 * leaves the scope open (01 Authentication 2); it is `observations:read` (docs/decisions/analysis.md).
 */
export default async function getUsageRoute(app: FastifyInstance): Promise<void> {
  app.get(
    '/v1/usage',
    {
      onRequest: [workspaceAuth('observations:read', { cli: 'allow' })],
      // The route takes no query: any member is a malformed request (01 Conventions).
      config: { validationError: 'invalid_request', errors: [] },
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: {} },
        response: { 200: usageSchema },
      },
    },
    async (request, reply) => {
      const usage = await workspaceUsage(app.deps, principalOf(request));
      return reply.send(usage);
    },
  );
}
