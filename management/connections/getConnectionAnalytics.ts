import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readConnectionAnalytics, type AnalyticsQuery } from '../observations/observationAnalytics.js';
import { analyticsQuery, analyticsResponse } from '../observations/schemas.js';

/**
 * GET /v1/connections/{connectionId}/analytics?from&to&bucket=minute|hour|day (00-decisions §5,
 * scope `observations:read`): counts by status class and operation and duration quantiles per
 * UTC bucket, served from ClickHouse.
 */
export default async function getConnectionAnalyticsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string }; Querystring: AnalyticsQuery }>(
    '/v1/connections/:connectionId/analytics',
    {
      onRequest: [workspaceAuth('observations:read', { cli: 'allow' })],
      config: { validationError: 'invalid_evidence_query', errors: ['connection_not_found'] },
      schema: {
        params: { type: 'object', required: ['connectionId'], properties: { connectionId: { type: 'string' } } },
        querystring: analyticsQuery,
        response: { 200: analyticsResponse },
      },
    },
    async (request, reply) => {
      const analytics = await readConnectionAnalytics(app.deps, principalOf(request), request.params.connectionId, request.query);
      return reply.send(analytics);
    },
  );
}
