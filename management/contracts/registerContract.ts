import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { registerContract, type RegistrationInput } from './contractRegistration.js';
import { reserveContractWrite } from './contractRateLimit.js';
import { integrationParams, registrationBody, registrationResponse } from './schemas.js';

/** Registration's errors beyond authentication (01), for the API and console routes. */
export const REGISTRATION_ERRORS = [
  'integration_not_found',
  'contract_version_already_exists',
  'integration_scope_mismatch',
  'connection_configuration_changed',
  'workspace_modes_unavailable',
  'rate_limited',
] as const;

/** POST /v1/integrations/{integrationId}/contracts (01 Contract API, Register). */
export default async function registerContractRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { integrationId: string }; Body: RegistrationInput }>(
    '/v1/integrations/:integrationId/contracts',
    {
      onRequest: [workspaceAuth('contracts:write', { cli: 'allow' }), rejectPausedWrite],
      config: {
        validationError: 'invalid_contract',
        errors: [...REGISTRATION_ERRORS],
      },
      schema: { params: integrationParams, body: registrationBody, response: { 201: registrationResponse } },
    },
    async (request, reply) => {
      await reserveContractWrite(app.deps, principalOf(request), 'registration');
      const result = await registerContract(app.deps, principalOf(request), request.params.integrationId, request.body);
      return reply.code(201).send(result);
    },
  );
}
