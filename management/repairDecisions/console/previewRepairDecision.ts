import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { CONSOLE_REPAIR_WRITE_ERRORS, consoleRepairActor } from '../../repairs/console/sessionActor.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { previewDecision } from '../decisionPreview.js';
import type { Decision } from '../decisionReview.js';
import { noQuery, previewBody, previewSchema } from '../schemas.js';

const params = withWorkspaceSlug({
  required: ['connectionId', 'proposalId'],
  properties: { connectionId: { type: 'string' }, proposalId: { type: 'string' } },
});

/**
 * POST /workspaces/{workspaceSlug}/connections/{connectionId}/repair-proposals/{proposalId}/decision-preview:
 * the CLI's decision preview (03 Reviewed repairs, Decision preview) for the signed-in owner or
 * admin of an active workspace: 201, bound to the user with no CLI client, so only they apply it,
 * from the console. Same body, rationale rule, admission, audit row and errors as the CLI route.
 */
export default async function consolePreviewRepairDecisionRoute(app: FastifyInstance): Promise<void> {
  app.post<{
    Params: { workspaceSlug: string; connectionId: string; proposalId: string };
    Body: { decision: Decision; rationale: string };
  }>(
    '/workspaces/:workspaceSlug/connections/:connectionId/repair-proposals/:proposalId/decision-preview',
    {
      onRequest: [sessionAuth()],
      config: {
        validationError: 'invalid_repair_request',
        errors: [
          ...CONSOLE_REPAIR_WRITE_ERRORS,
          'connection_required',
          'connection_not_found',
          'repair_proposal_not_found',
          'repair_proposal_not_approvable',
          'workload_rate_limited',
        ],
      },
      schema: { params, querystring: noQuery, body: previewBody, response: { 201: previewSchema } },
    },
    async (request, reply) => {
      const { workspaceSlug, connectionId, proposalId } = request.params;
      const actor = await consoleRepairActor(app.deps, sessionOf(request), workspaceSlug);
      const preview = await previewDecision(app.deps, actor, { connectionId, proposalId, ...request.body });
      return reply.code(201).send(preview);
    },
  );
}
