import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/apiKeyAuth.js';
import { workspaceAuth } from '../auth/workspaceAuth.js';
import { readObservation, type ObservationDetailQuery } from './observationReads.js';
import { detailQuery, detailResponse, eventIdParams } from './schemas.js';

/** GET /v1/observations/{eventId}?integrationId=int_… (00-decisions §5, scope `observations:read`). */
export default async function getObservationRoute(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { eventId: string }; Querystring: ObservationDetailQuery }>(
    '/v1/observations/:eventId',
    {
      onRequest: [workspaceAuth('observations:read', { cli: 'allow' })],
      config: { validationError: 'invalid_evidence_query', errors: ['connection_required', 'observation_not_found'] },
      schema: { params: eventIdParams, querystring: detailQuery, response: { 200: detailResponse } },
    },
    async (request, reply) => {
      const observation = await readObservation(app.deps, principalOf(request), request.params.eventId, request.query);
      return reply.send({ observation });
    },
  );
}
