import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readCredentialOperation } from './credentialService.js';
import { credentialReceiptSchema } from './schemas.js';

/** GET /v1/credential-operations/{operationId}: receipt recovery for the key that performed it. */
export default async function getCredentialOperation(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { operationId: string } }>(
    '/v1/credential-operations/:operationId',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' })],
      config: { validationError: 'invalid_credential_request', errors: ['operation_not_found'] },
      schema: {
        params: { type: 'object', required: ['operationId'], properties: { operationId: { type: 'string' } }, additionalProperties: false },
        response: { 200: credentialReceiptSchema },
      },
    },
    async (request) => {
      const receipt = await readCredentialOperation(app.deps, apiKeyPrincipalOf(request), request.params.operationId);
      return receipt;
    },
  );
}
