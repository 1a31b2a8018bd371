import type { FastifyInstance } from 'fastify';
import consoleCredentialMutation from './consoleCredentialMutation.js';
import getCredentialOperation from './getCredentialOperation.js';
import getCredentialStatus from './getCredentialStatus.js';
import issueCredential from './issueCredential.js';
import legacyCredentialMutation from './legacyCredentialMutation.js';
import revokeCredential from './revokeCredential.js';
import rotateCredential from './rotateCredential.js';
import verifyCredentialRoute from './verifyCredential.js';

/** Registers the credentials routes (01 Connection credential lifecycle). */
export default async function credentialsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(getCredentialStatus);
  await app.register(issueCredential);
  await app.register(rotateCredential);
  await app.register(revokeCredential);
  await app.register(verifyCredentialRoute);
  await app.register(getCredentialOperation);
  await app.register(legacyCredentialMutation);
  await app.register(consoleCredentialMutation);
}
