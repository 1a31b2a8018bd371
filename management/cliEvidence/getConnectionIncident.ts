import type { FastifyInstance } from 'fastify';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { readConnectionIncident } from '../incidents/incidentReads.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { incidentDetailResponse, incidentParams, noQuery } from './schemas.js';

/**
 * GET /v1/cli/connections/{connectionId}/incidents/{incidentId} (03 Evidence reads, scope
 * `incidents:read`): `{incident: detail}`, redacted by its response schema.
 */
export default async function getConnectionIncidentRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; incidentId: string } }>(
    '/v1/cli/connections/:connectionId/incidents/:incidentId',
    {
      onRequest: [cliAuth({ scope: 'incidents:read', workspace: true })],
      config: { validationError: 'invalid_incident_query', errors: ['connection_required', 'connection_not_found', 'incident_not_found'] },
      schema: { params: incidentParams, querystring: noQuery, response: { 200: incidentDetailResponse } },
    },
    async (request, reply) => {
      const { connectionId, incidentId } = request.params;
      const incident = await readConnectionIncident(app.deps, cliWorkspaceOf(request).id, connectionId, incidentId);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, incident });
    },
  );
}
