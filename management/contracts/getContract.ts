import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readContract } from './contractReads.js';
import { singleResponse, versionParams } from './schemas.js';

/** GET /v1/integrations/{integrationId}/contracts/{contractVersionId} (01 Contract API). */
export default async function getContractRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { integrationId: string; contractVersionId: string } }>(
    '/v1/integrations/:integrationId/contracts/:contractVersionId',
    {
      onRequest: [workspaceAuth('contracts:read', { cli: 'allow' })],
      config: {
        validationError: 'contract_not_found',
        errors: ['integration_not_found', 'contract_not_found', 'workspace_modes_unavailable'],
      },
      schema: { params: versionParams, response: { 200: singleResponse } },
    },
    async (request, reply) => {
      const { integrationId, contractVersionId } = request.params;
      const contract = await readContract(app.deps, principalOf(request), integrationId, contractVersionId);
      return reply.send({ contract });
    },
  );
}
