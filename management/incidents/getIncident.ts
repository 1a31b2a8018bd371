import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readIncident, type IncidentDetailQuery } from './incidentReads.js';
import { detailQuery, detailResponse, incidentParams } from './schemas.js';

/**
 * GET /v1/incidents/{incidentId}?mode=sandbox|live (00-decisions §5): `{incident: detail}`, the
 * envelope of the CLI's incident read (03), private and uncached.
 */
export default async function getIncidentRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { incidentId: string }; Querystring: IncidentDetailQuery }>(
    '/v1/incidents/:incidentId',
    {
      onRequest: [workspaceAuth('incidents:read', { cli: 'allow' })],
      config: { validationError: 'invalid_incident_query', errors: ['incident_not_found', 'connection_not_found'] },
      schema: { params: incidentParams, querystring: detailQuery, response: { 200: detailResponse } },
    },
    async (request, reply) => {
      const incident = await readIncident(app.deps, principalOf(request), request.params.incidentId, request.query);
      return reply.send({ incident });
    },
  );
}
