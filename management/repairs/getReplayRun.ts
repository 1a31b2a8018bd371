import type { FastifyInstance } from 'fastify';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { readConnectionRun } from './repairReads.js';
import { noQuery, runParams, runResponse } from './schemas.js';

/** GET /v1/cli/connections/{connectionId}/replay-runs/{runId} (03 Evidence reads, scope `replays:read`): `{run}`. */
export default async function getReplayRunRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; runId: string } }>(
    '/v1/cli/connections/:connectionId/replay-runs/:runId',
    {
      onRequest: [cliAuth({ scope: 'replays:read', workspace: true })],
      config: {
        validationError: 'invalid_evidence_query',
        errors: ['connection_required', 'connection_not_found', 'replay_run_not_found'],
      },
      schema: { params: runParams, querystring: noQuery, response: { 200: runResponse } },
    },
    async (request, reply) => {
      const { connectionId, runId } = request.params;
      const run = await readConnectionRun(app.deps, cliWorkspaceOf(request).id, connectionId, runId);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, run });
    },
  );
}
