import type { FastifyInstance } from 'fastify';
import { cliAuth } from '../auth/cliAuth.js';
import { cliActorOf, hasCliScope } from './cliActor.js';
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
        cliActorOf(request),
        (scope) => hasCliScope(request, scope),
        request.params.operationId,
      );
      return reply.send(operation);
    },
  );
}
