import type { FastifyInstance } from 'fastify';
import { cliScope } from '../auth/cliApi.js';
import { cliAuth, cliPrincipalOf } from '../auth/cliAuth.js';
import { cliOperationActor } from '../repairs/repairActor.js';
import { readRepairOperation } from './operationStatus.js';
import { noQuery, operationParams, operationSchema } from './schemas.js';

/**
 * GET /v1/cli/operations/{operationId} (03 Reviewed repairs, scope of the original action): a
 * preview, an expired preview or a retained receipt.
 */
export default async function getRepairOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/cli/operations/:operationId',
    {
      // No one scope fits every operation: the service checks the one of the operation found.
      onRequest: [cliAuth({ workspace: true })],
      config: { validationError: 'invalid_repair_request', errors: ['operation_not_found', 'insufficient_scope', 'authorization_changed'] },
      schema: { params: operationParams, querystring: noQuery, response: { 200: operationSchema } },
    },
    async (request, reply) => {
      const operation = await readRepairOperation(
        app.deps,
        cliOperationActor(request),
        (scope) => cliPrincipalOf(request).scopes.includes(cliScope(scope)),
        request.params.operationId,
      );
      return reply.send(operation);
    },
  );
}
