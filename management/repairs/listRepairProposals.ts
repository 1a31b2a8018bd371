import type { FastifyInstance } from 'fastify';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { listIncidentProposals, type RepairListQuery } from './repairReads.js';
import { incidentParams, listQuery, proposalListResponse } from './schemas.js';

/**
 * GET /v1/cli/connections/{connectionId}/incidents/{incidentId}/repair-proposals[?limit][&cursor]
 * (03 Evidence reads, scope `repairs:read`): the incident's proposals, newest first.
 */
export default async function listRepairProposalsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; incidentId: string }; Querystring: RepairListQuery }>(
    '/v1/cli/connections/:connectionId/incidents/:incidentId/repair-proposals',
    {
      onRequest: [cliAuth({ scope: 'repairs:read', workspace: true })],
      config: {
        validationError: 'invalid_evidence_query',
        errors: ['connection_required', 'connection_not_found', 'incident_not_found', 'invalid_evidence_query', 'invalid_evidence_cursor'],
      },
      schema: { params: incidentParams, querystring: listQuery, response: { 200: proposalListResponse } },
    },
    async (request, reply) => {
      const { connectionId, incidentId } = request.params;
      const page = await listIncidentProposals(
        app.deps,
        { workspaceId: cliWorkspaceOf(request).id, connectionId, incidentId },
        request.query,
      );
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...page });
    },
  );
}
