import type { FastifyInstance } from 'fastify';
import getObservationRoute from './getObservation.js';
import listObservationsRoute from './listObservations.js';

/** Registers the observation reads (00-decisions §5); connection analytics live with the connection routes. */
export default async function observationsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(listObservationsRoute);
  await app.register(getObservationRoute);
}
