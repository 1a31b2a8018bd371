import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readOwnOperation } from '../operations/idempotency.js';
import { creationReplayBody, INTEGRATION_CREATE_KIND } from './integrationCreation.js';
import { creationReceiptSchema } from './schemas.js';

/**
 * GET /v1/integration-operations/{operationId} (01): the credential-free replay shape, only for
 * the key that created the operation; malformed, missing or differently authorized → 404.
 */
export default async function getIntegrationOperationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/integration-operations/:operationId',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' })],
      config: { validationError: 'operation_not_found', errors: ['operation_not_found'] },
      schema: {
        params: { type: 'object', required: ['operationId'], properties: { operationId: { type: 'string' } } },
        response: { 200: creationReceiptSchema },
      },
    },
    async (request, reply) => {
      const { operationId } = request.params;
      if (!hasIdForm(operationId, 'intop_')) throw new AppError('operation_not_found');
      const stored = await readOwnOperation(request.server.deps, principalOf(request), operationId, [INTEGRATION_CREATE_KIND]);
      return reply.send(creationReplayBody(stored));
    },
  );
}
