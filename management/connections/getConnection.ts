import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { observationStateOf, type ObservationState } from '../integrations/integrationStore.js';
import { findConnectionWithEvidence } from './connectionStore.js';
import { connectionView, connectionViewSchema } from './connectionView.js';

const OBSERVATION_STATES: readonly ObservationState[] = ['waiting_for_observation', 'observed', 'incident_open'];

/**
 * 01 Connection (single read): no token, token hash or key material can be serialised. Beside
 * the fields 01 lists, the read carries the evidence of the inventory's connection slot
 * (`latestObservationAt`, `openIncidentCount`, `observationState`), derived by the same function,
 * so the two reads of one connection agree (docs/decisions/integrations.md).
 */
const connectionSchema = {
  type: 'object',
  required: [...connectionViewSchema.required, 'latestObservationAt', 'openIncidentCount', 'observationState'],
  properties: {
    ...connectionViewSchema.properties,
    latestObservationAt: { type: ['string', 'null'] },
    openIncidentCount: { type: 'integer' },
    observationState: { type: 'string', enum: OBSERVATION_STATES },
  },
} as const;

/**
 * GET /v1/connections/{connectionId} (01 Integration and connection reads): one live connection
 * of the key's workspace by exact `int_` id; a `wint_`, malformed, deleted or foreign id is 404.
 * Works for legacy connections too: their exact environment id is returned with its classified
 * mode, which grants nothing.
 */
export default async function getConnectionRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { connectionId: string } }>(
    '/v1/connections/:connectionId',
    {
      onRequest: [workspaceAuth('integrations:read', { cli: 'allow' })],
      config: { validationError: 'connection_not_found', errors: ['connection_not_found'] },
      schema: {
        params: { type: 'object', required: ['connectionId'], properties: { connectionId: { type: 'string' } } },
        response: { 200: connectionSchema },
      },
    },
    async (request, reply) => {
      const { connectionId } = request.params;
      if (!hasIdForm(connectionId, 'int_')) throw new AppError('connection_not_found');
      const connection = await findConnectionWithEvidence(app.deps.pool, principalOf(request).workspaceId, connectionId);
      if (!connection) throw new AppError('connection_not_found');
      return reply.send({
        ...connectionView(connection),
        latestObservationAt: connection.latestObservationAt ? connection.latestObservationAt.toISOString() : null,
        openIncidentCount: connection.openIncidentCount,
        observationState: observationStateOf(connection.openIncidentCount, connection.latestObservationAt),
      });
    },
  );
}
