import type { FastifyInstance } from 'fastify';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { listIncidentDatasets, type RepairListQuery } from './repairReads.js';
import { datasetListResponse, incidentParams, listQuery } from './schemas.js';

/**
 * GET /v1/cli/connections/{connectionId}/incidents/{incidentId}/replay-datasets[?limit][&cursor]
 * (03 Evidence reads, scope `replays:read`): the incident's frozen datasets, newest first, never
 * their fixtures.
 */
export default async function listReplayDatasetsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; incidentId: string }; Querystring: RepairListQuery }>(
    '/v1/cli/connections/:connectionId/incidents/:incidentId/replay-datasets',
    {
      onRequest: [cliAuth({ scope: 'replays:read', workspace: true })],
      config: {
        validationError: 'invalid_evidence_query',
        errors: ['connection_required', 'connection_not_found', 'incident_not_found', 'invalid_evidence_query', 'invalid_evidence_cursor'],
      },
      schema: { params: incidentParams, querystring: listQuery, response: { 200: datasetListResponse } },
    },
    async (request, reply) => {
      const { connectionId, incidentId } = request.params;
      const page = await listIncidentDatasets(
        app.deps,
        { workspaceId: cliWorkspaceOf(request).id, connectionId, incidentId },
        request.query,
      );
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...page });
    },
  );
}
