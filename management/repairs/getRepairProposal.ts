import type { FastifyInstance } from 'fastify';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { readConnectionProposal } from './repairReads.js';
import { cliProposalResponse, noQuery, proposalParams } from './schemas.js';

/** GET /v1/cli/connections/{connectionId}/repair-proposals/{proposalId} (03 Evidence reads, scope `repairs:read`): `{proposal}`. */
export default async function getRepairProposalRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; proposalId: string } }>(
    '/v1/cli/connections/:connectionId/repair-proposals/:proposalId',
    {
      onRequest: [cliAuth({ scope: 'repairs:read', workspace: true })],
      config: {
        validationError: 'invalid_evidence_query',
        errors: ['connection_required', 'connection_not_found', 'repair_proposal_not_found'],
      },
      schema: { params: proposalParams, querystring: noQuery, response: { 200: cliProposalResponse } },
    },
    async (request, reply) => {
      const { connectionId, proposalId } = request.params;
      const proposal = await readConnectionProposal(app.deps, cliWorkspaceOf(request).id, connectionId, proposalId);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, proposal });
    },
  );
}
