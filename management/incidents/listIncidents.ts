import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { listIncidents, type IncidentListQuery } from './incidentReads.js';
import { listQuery, listResponse } from './schemas.js';

/** GET /v1/incidents?integrationId=int_…&mode=sandbox|live[&status][&limit][&cursor] (00-decisions §5). */
export default async function listIncidentsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: IncidentListQuery }>(
    '/v1/incidents',
    {
      onRequest: [workspaceAuth('incidents:read', { cli: 'allow' })],
      config: {
        validationError: 'invalid_incident_query',
        errors: ['connection_required', 'connection_not_found', 'invalid_incident_query', 'invalid_incident_cursor'],
      },
      schema: { querystring: listQuery, response: { 200: listResponse } },
    },
    async (request, reply) => {
      const page = await listIncidents(app.deps, principalOf(request), request.query);
      return reply.send(page);
    },
  );
}
