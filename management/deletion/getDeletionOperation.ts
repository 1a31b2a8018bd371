import type { FastifyInstance } from 'fastify';
import { deletionActorOf, deletionAuth } from './deletionAuth.js';
import { readDeletion } from './deletionService.js';
import { noQuery, operationParams, statusSchema } from './schemas.js';

/** GET /v1/deletion-operations/{operationId}: the pending or expired review, or the completed receipt. */
export default async function getDeletionOperation(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/deletion-operations/:operationId',
    {
      onRequest: [deletionAuth()],
      config: { validationError: 'invalid_integration_deletion', errors: ['not_found'] },
      schema: { params: operationParams, querystring: noQuery, response: { 200: statusSchema } },
    },
    async (request, reply) => {
      const status = await readDeletion(app.deps, deletionActorOf(request), request.params.operationId);
      return reply.send(status);
    },
  );
}
