import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { activateContract, type ActivationInput } from './contractActivation.js';
import { reserveContractWrite } from './contractRateLimit.js';
import { requireReanalysisAvailable } from './reanalysis.js';
import { activationBody, activationResponse, versionParams } from './schemas.js';

/** Activation's errors beyond authentication (01), for the API and console routes. */
export const ACTIVATION_ERRORS = [
  'integration_not_found',
  'contract_not_found',
  'active_contract_changed',
  'contract_not_activatable',
  'connection_configuration_changed',
  'workspace_modes_unavailable',
  'rate_limited',
] as const;

/** POST /v1/integrations/{integrationId}/contracts/{contractVersionId}/activate (01 Activate). */
export default async function activateContractRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { integrationId: string; contractVersionId: string }; Body: ActivationInput }>(
    '/v1/integrations/:integrationId/contracts/:contractVersionId/activate',
    {
      // Reanalysis availability comes before the write-pause check, which needs the same Redis.
      onRequest: [workspaceAuth('contracts:activate', { cli: 'allow' }), requireReanalysisAvailable, rejectPausedWrite],
      config: {
        validationError: 'invalid_contract_activation',
        errors: [...ACTIVATION_ERRORS],
      },
      schema: { params: versionParams, body: activationBody, response: { 200: activationResponse } },
    },
    async (request, reply) => {
      await reserveContractWrite(app.deps, principalOf(request), 'activation');
      const { integrationId, contractVersionId } = request.params;
      const result = await activateContract(app.deps, principalOf(request), integrationId, contractVersionId, request.body);
      return reply.send(result);
    },
  );
}
