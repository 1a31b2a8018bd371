import type { FastifyInstance } from 'fastify';
import { apiKeyPrincipalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { rejectPausedWrite } from '../maintenance.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { createIntegration, trimmedText, type IntegrationCreationInput } from './integrationCreation.js';
import { creationReceiptSchema, DIRECTIONS, MODES, PROTOCOLS } from './schemas.js';

/** The creation body (01 "Create an Integration and its first connection"), for both routes. */
export const creationBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['mode', 'name', 'provider', 'direction', 'protocol'],
  properties: {
    mode: { type: 'string', enum: MODES },
    name: { type: 'string' },
    provider: { type: 'string' },
    direction: { type: 'string', enum: DIRECTIONS },
    protocol: { type: 'string', enum: PROTOCOLS },
  },
} as const;

/** The body as the service takes it: name and provider trimmed. */
export function creationInput(body: IntegrationCreationInput): IntegrationCreationInput {
  return {
    mode: body.mode,
    name: trimmedText(body.name),
    provider: trimmedText(body.provider),
    direction: body.direction,
    protocol: body.protocol,
  };
}

/** The errors of creation beyond authentication, for both routes. */
export const CREATION_ERRORS = [
  'invalid_integration',
  'idempotency_key_required',
  'idempotency_conflict',
  'workspace_authorization_changed',
  'workspace_modes_unavailable',
  'workspace_unavailable',
] as const;

/** POST /v1/integrations (01 "Create an Integration and its first connection"). */
export default async function createIntegrationRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Body: IntegrationCreationInput }>(
    '/v1/integrations',
    {
      onRequest: [workspaceAuth('integrations:manage', { cli: 'deny' }), rejectPausedWrite],
      // The Idempotency-Key header is checked before the body (both are 400s).
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_integration',
        errors: [...CREATION_ERRORS],
      },
      schema: {
        body: creationBodySchema,
        response: { 200: creationReceiptSchema, 201: creationReceiptSchema },
      },
    },
    async (request, reply) => {
      const result = await createIntegration(
        request.server.deps,
        apiKeyPrincipalOf(request),
        readIdempotencyKey(request),
        creationInput(request.body),
      );
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
