import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { listObservations, type ObservationListQuery } from './observationReads.js';
import { listQuery, listResponse } from './schemas.js';

/**
 * GET /v1/observations?integrationId=int_…[&limit][&cursor][&from][&to][&eventType][&operationKey][&status]
 * (00-decisions §5, scope `observations:read`).
 */
export default async function listObservationsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: ObservationListQuery }>(
    '/v1/observations',
    {
      onRequest: [workspaceAuth('observations:read', { cli: 'allow' })],
      config: {
        validationError: 'invalid_evidence_query',
        errors: ['connection_required', 'invalid_evidence_query', 'invalid_evidence_cursor'],
      },
      schema: { querystring: listQuery, response: { 200: listResponse } },
    },
    async (request, reply) => {
      const page = await listObservations(app.deps, principalOf(request), request.query);
      return reply.send(page);
    },
  );
}
