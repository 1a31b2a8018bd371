import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../../auth/sessionAuth.js';
import { readIdempotencyKey } from '../../operations/idempotency.js';
import { CONSOLE_REPAIR_WRITE_ERRORS, consoleRepairActor } from '../../repairs/console/sessionActor.js';
import { withWorkspaceSlug } from '../../workspaces/schemas.js';
import { applyDecision } from '../decisionApply.js';
import { applyBody, decisionReceiptSchema, noQuery } from '../schemas.js';

const params = withWorkspaceSlug({ required: ['operationId'], properties: { operationId: { type: 'string' } } });

/**
 * POST /workspaces/{workspaceSlug}/repair-operations/{operationId}/apply: the CLI's apply (03
 * Reviewed repairs) for the signed-in owner or admin of an active workspace, 200 receipt
 * `repair.decision`. Only a preview this user made from the console is found: one made through
 * a CLI client is 404 `operation_not_found` here, as a console preview is on the CLI route.
 * `repair-operations` rather than the CLI's `operations`, beside the console's
 * `configuration-operations` and `rule-operations`.
 */
export default async function consoleApplyRepairDecisionRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string; operationId: string }; Body: { approvalFingerprint: string } }>(
    '/workspaces/:workspaceSlug/repair-operations/:operationId/apply',
    {
      onRequest: [sessionAuth()],
      // The Idempotency-Key header is checked before the body, as on every keyed route.
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_repair_request',
        errors: [
          ...CONSOLE_REPAIR_WRITE_ERRORS,
          'idempotency_key_required',
          'idempotency_conflict',
          'operation_not_found',
          'authorization_changed',
          'review_expired',
          'approval_mismatch',
          'review_stale',
        ],
      },
      schema: { params, querystring: noQuery, body: applyBody, response: { 200: decisionReceiptSchema } },
    },
    async (request, reply) => {
      const idempotencyKey = readIdempotencyKey(request);
      const actor = await consoleRepairActor(app.deps, sessionOf(request), request.params.workspaceSlug);
      const result = await applyDecision(app.deps, actor, {
        operationId: request.params.operationId,
        approvalFingerprint: request.body.approvalFingerprint,
        idempotencyKey,
      });
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
