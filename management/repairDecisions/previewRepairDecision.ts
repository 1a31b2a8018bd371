import type { FastifyInstance } from 'fastify';
import { cliAuth } from '../auth/cliAuth.js';
import { cliOperationActor } from '../repairs/repairActor.js';
import { previewDecision } from './decisionPreview.js';
import type { Decision } from './decisionReview.js';
import { noQuery, previewBody, previewSchema, proposalParams } from './schemas.js';

/**
 * POST /v1/cli/connections/{connectionId}/repair-proposals/{proposalId}/decision-preview (03
 * Reviewed repairs, scope `repairs:approve`, owner or admin): 201 decision preview.
 */
export default async function previewRepairDecisionRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { connectionId: string; proposalId: string }; Body: { decision: Decision; rationale: string } }>(
    '/v1/cli/connections/:connectionId/repair-proposals/:proposalId/decision-preview',
    {
      onRequest: [cliAuth({ scope: 'repairs:approve', workspace: true })],
      config: {
        validationError: 'invalid_repair_request',
        errors: [
          'connection_required',
          'connection_not_found',
          'repair_proposal_not_found',
          'repair_proposal_not_approvable',
          'workload_rate_limited',
        ],
      },
      schema: { params: proposalParams, querystring: noQuery, body: previewBody, response: { 201: previewSchema } },
    },
    async (request, reply) => {
      const preview = await previewDecision(app.deps, cliOperationActor(request), { ...request.params, ...request.body });
      return reply.code(201).send(preview);
    },
  );
}
