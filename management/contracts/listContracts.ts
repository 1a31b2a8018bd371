import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { requireSetupBinding, workspaceAuth } from '../auth/workspaceAuth.js';
import { listContracts, type ContractListQuery } from './contractReads.js';
import { integrationParams, listQuery, listResponse } from './schemas.js';

/**
 * GET /v1/integrations/{integrationId}/contracts (01 Contract API). Also the one contract route a
 * setup OAuth token with `service:setup:contracts:read` may call (01 Authentication 4: "may list
 * contracts only"), for its bound connection only.
 */
export default async function listContractsRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { integrationId: string }; Querystring: ContractListQuery }>(
    '/v1/integrations/:integrationId/contracts',
    {
      onRequest: [workspaceAuth('contracts:read', { cli: 'allow', setup: 'service:setup:contracts:read' })],
      config: {
        validationError: 'invalid_contract_query',
        // `integration_scope_mismatch`: a setup token's, for another connection (the reference lists it under 403).
        errors: [
          'integration_scope_mismatch',
          'integration_not_found',
          'invalid_contract_query',
          'invalid_contract_cursor',
          'workspace_modes_unavailable',
        ],
      },
      schema: { params: integrationParams, querystring: listQuery, response: { 200: listResponse } },
    },
    async (request, reply) => {
      requireSetupBinding(principalOf(request), { connectionId: request.params.integrationId });
      const page = await listContracts(app.deps, principalOf(request), request.params.integrationId, request.query);
      return reply.send(page);
    },
  );
}
