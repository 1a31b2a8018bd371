import type { FastifyInstance } from 'fastify';
import { registerCredentialMutation } from './credentialMutationRoute.js';

/** POST /v1/connections/{connectionId}/credentials/issue (01 Connection credential lifecycle). */
export default async function issueCredential(app: FastifyInstance): Promise<void> {
  registerCredentialMutation(app, 'issue');
}
