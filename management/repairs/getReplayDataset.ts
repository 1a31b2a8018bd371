import type { FastifyInstance } from 'fastify';
import { CLI_SCHEMA_VERSION } from '../auth/cliApi.js';
import { cliAuth, cliWorkspaceOf } from '../auth/cliAuth.js';
import { readConnectionDataset } from './repairReads.js';
import { datasetParams, datasetResponse, noQuery } from './schemas.js';

/** GET /v1/cli/connections/{connectionId}/replay-datasets/{datasetId} (03 Evidence reads, scope `replays:read`): `{dataset}`. */
export default async function getReplayDatasetRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string; datasetId: string } }>(
    '/v1/cli/connections/:connectionId/replay-datasets/:datasetId',
    {
      onRequest: [cliAuth({ scope: 'replays:read', workspace: true })],
      config: {
        validationError: 'invalid_evidence_query',
        errors: ['connection_required', 'connection_not_found', 'replay_dataset_not_found'],
      },
      schema: { params: datasetParams, querystring: noQuery, response: { 200: datasetResponse } },
    },
    async (request, reply) => {
      const { connectionId, datasetId } = request.params;
      const dataset = await readConnectionDataset(app.deps, cliWorkspaceOf(request).id, connectionId, datasetId);
      return reply.send({ schemaVersion: CLI_SCHEMA_VERSION, dataset });
    },
  );
}
