import type { FastifyInstance } from 'fastify';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { listConnectionIncidents, type IncidentPageQuery } from '../incidents/incidentReads.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { connectionParams, incidentListQuery, incidentListResponse } from './schemas.js';

/**
 * GET /v1/cli/connections/{connectionId}/incidents[?status=open|resolved][&limit][&cursor]
 * (03 Evidence reads, scope `incidents:read`): the `/v1` incident list of the path connection in
 * its own mode, with a cursor of the CLI's own list.
 */
export default async function listConnectionIncidentsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string }; Querystring: IncidentPageQuery }>(
    '/v1/cli/connections/:connectionId/incidents',
    {
      onRequest: [cliAuth({ scope: 'incidents:read', workspace: true })],
      config: {
        validationError: 'invalid_incident_query',
        errors: ['connection_required', 'connection_not_found', 'invalid_incident_query', 'invalid_incident_cursor'],
      },
      schema: { params: connectionParams, querystring: incidentListQuery, response: { 200: incidentListResponse } },
    },
    async (request, reply) => {
      const page = await listConnectionIncidents(app.deps, cliWorkspaceOf(request).id, request.params.connectionId, request.query);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...page });
    },
  );
}
