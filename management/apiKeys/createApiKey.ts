import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { workspaceSlugParams } from '../workspaces/schemas.js';
import { createWorkspaceApiKey, type CreateApiKeyInput } from './apiKeyService.js';
import { API_KEY_MAX_LIFETIME_SECONDS, API_KEY_MIN_LIFETIME_SECONDS } from './rules.js';
import { createdApiKeySchema, scopesSchema } from './schemas.js';

/** POST /workspaces/{workspaceSlug}/api-keys → 201 `{apiKey}` with the plaintext key shown once. */
export default function createApiKeyRoute(app: FastifyInstance): void {
  app.post<{ Params: { workspaceSlug: string }; Body: CreateApiKeyInput }>(
    '/workspaces/:workspaceSlug/api-keys',
    {
      onRequest: [sessionAuth()],
      config: { validationError: 'invalid_api_key_request', errors: ['invalid_api_key_request', 'workspace_not_found', 'forbidden'] },
      schema: {
        params: workspaceSlugParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['scopes'],
          properties: {
            name: { type: 'string', maxLength: 480 },
            scopes: { ...scopesSchema, minItems: 1, uniqueItems: true },
            expiresInSeconds: { type: 'integer', minimum: API_KEY_MIN_LIFETIME_SECONDS, maximum: API_KEY_MAX_LIFETIME_SECONDS },
          },
        },
        response: { 201: { type: 'object', required: ['apiKey'], properties: { apiKey: createdApiKeySchema } } },
      },
    },
    async (request, reply) => {
      const apiKey = await createWorkspaceApiKey(app.deps, sessionOf(request), request.params.workspaceSlug, request.body);
      return reply.code(201).send({ apiKey });
    },
  );
}
