import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readProposalInMode } from './repairReads.js';
import { modeQuery, proposalIdParams, proposalResponse } from './schemas.js';

/**
 * GET /v1/repair-proposals/{proposalId}?mode=sandbox|live (00-decisions §5, scope `repairs:read`):
 * `{proposal}`, the read of the CLI's proposal route for a workspace API key (or a CLI token with
 * the workspace header), in the mode the caller names.
 */
export default async function getProposalByKeyRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { proposalId: string }; Querystring: { mode?: string } }>(
    '/v1/repair-proposals/:proposalId',
    {
      onRequest: [workspaceAuth('repairs:read', { cli: 'allow' })],
      config: { validationError: 'invalid_evidence_query', errors: ['repair_proposal_not_found'] },
      schema: { params: proposalIdParams, querystring: modeQuery, response: { 200: proposalResponse } },
    },
    async (request, reply) => {
      const proposal = await readProposalInMode(app.deps, principalOf(request), request.params.proposalId, request.query.mode);
      return reply.send({ proposal });
    },
  );
}
