import type { FastifyInstance } from 'fastify';
import { registerCredentialMutation } from './credentialMutationRoute.js';

/** POST /v1/connections/{connectionId}/credentials/revoke (01 Connection credential lifecycle). */
export default async function revokeCredential(app: FastifyInstance): Promise<void> {
  registerCredentialMutation(app, 'revoke');
}
