import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { listContracts, type ContractListQuery } from './contractReads.js';
import { integrationParams, listQuery, listResponse } from './schemas.js';

/** GET /v1/integrations/{integrationId}/contracts (01 Contract API). */
export default async function listContractsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { integrationId: string }; Querystring: ContractListQuery }>(
    '/v1/integrations/:integrationId/contracts',
    {
      onRequest: [workspaceAuth('contracts:read', { cli: 'allow' })],
      config: {
        validationError: 'invalid_contract_query',
        errors: ['integration_not_found', 'invalid_contract_query', 'invalid_contract_cursor', 'workspace_modes_unavailable'],
      },
      schema: { params: integrationParams, querystring: listQuery, response: { 200: listResponse } },
    },
    async (request, reply) => {
      const page = await listContracts(app.deps, principalOf(request), request.params.integrationId, request.query);
      return reply.send(page);
    },
  );
}
