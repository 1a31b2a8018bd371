import type { FastifyInstance } from 'fastify';
import getConnectionIncidentRoute from './getConnectionIncident.js';
import listConnectionIncidentsRoute from './listConnectionIncidents.js';
import verifyConnectionRoute from './verifyConnection.js';

/** Registers the CLI evidence reads of one exact connection (03 Evidence reads). */
export default async function cliEvidenceRoutes(app: FastifyInstance): Promise<void> {
  await app.register(verifyConnectionRoute);
  await app.register(listConnectionIncidentsRoute);
  await app.register(getConnectionIncidentRoute);
}
