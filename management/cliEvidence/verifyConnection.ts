import type { FastifyInstance } from 'fastify';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { verifyConnection } from './connectionVerification.js';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { connectionParams, noQuery, verificationResponse } from './schemas.js';

/** GET /v1/cli/connections/{connectionId}/verify (03 Evidence reads, scope `observations:read`). */
export default async function verifyConnectionRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string } }>(
    '/v1/cli/connections/:connectionId/verify',
    {
      onRequest: [cliAuth({ scope: 'observations:read', workspace: true })],
      config: { validationError: 'invalid_evidence_query', errors: ['connection_required', 'connection_not_found'] },
      schema: { params: connectionParams, querystring: noQuery, response: { 200: verificationResponse } },
    },
    async (request, reply) => {
      const verification = await verifyConnection(app.deps.pool, cliWorkspaceOf(request).id, request.params.connectionId);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, ...verification });
    },
  );
}
