import type { FastifyInstance } from 'fastify';
import { registerCredentialMutation } from './credentialMutationRoute.js';

/** POST /v1/connections/{connectionId}/credentials/rotate (01 Connection credential lifecycle). */
export default async function rotateCredential(app: FastifyInstance): Promise<void> {
  registerCredentialMutation(app, 'rotate');
}
