import type { FastifyInstance } from 'fastify';
import { sessionAuth, sessionOf } from '../auth/sessionAuth.js';
import { activeWorkspaceManager } from '../auth/workspaceUserAuth.js';
import { readIdempotencyKey } from '../operations/idempotency.js';
import { withWorkspaceSlug } from '../workspaces/schemas.js';
import { CREATION_ERRORS, creationBodySchema, creationInput } from './createIntegration.js';
import { createIntegration, type IntegrationCreationInput } from './integrationCreation.js';
import { creationReceiptSchema } from './schemas.js';

const params = withWorkspaceSlug({ required: [], properties: {} });

/**
 * POST /workspaces/{workspaceSlug}/integrations: the console's "Add an Integration" (02: browser
 * session adapters use the API's paths under /workspaces/{workspaceSlug}). The API route's body,
 * service, receipt (the first connection's `ingestToken` once), replay and errors, with the
 * signed-in owner or admin of an active workspace as the operation's actor (audit `actor_type user`).
 */
export default async function consoleCreateIntegrationRoute(app: FastifyInstance): Promise<void> {
  app.post<{ Params: { workspaceSlug: string }; Body: IntegrationCreationInput }>(
    '/workspaces/:workspaceSlug/integrations',
    {
      onRequest: [sessionAuth()],
      preValidation: async (request) => {
        readIdempotencyKey(request);
      },
      config: {
        validationError: 'invalid_integration',
        errors: ['workspace_not_found', 'forbidden', ...CREATION_ERRORS],
      },
      schema: { params, body: creationBodySchema, response: { 200: creationReceiptSchema, 201: creationReceiptSchema } },
    },
    async (request, reply) => {
      const idempotencyKey = readIdempotencyKey(request);
      const actor = await activeWorkspaceManager(app.deps.pool, sessionOf(request), request.params.workspaceSlug);
      const result = await createIntegration(app.deps, actor, idempotencyKey, creationInput(request.body));
      return reply.code(result.statusCode).send(result.body);
    },
  );
}
