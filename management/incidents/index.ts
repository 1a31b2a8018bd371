import type { FastifyInstance } from 'fastify';
import getIncidentRoute from './getIncident.js';
import listIncidentsRoute from './listIncidents.js';

/** Registers the incident reads for workspace API keys (00-decisions §5). */
export default async function incidentsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(listIncidentsRoute);
  await app.register(getIncidentRoute);
}
