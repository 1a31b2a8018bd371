import type { OperationActor } from '../auth/principal.js';

/**
 * The columns naming the actor of a review or an operation: the API key, or the user (with the
 * CLI client when the user acts through one: user and client own it together).
 */
export interface Reviewer {
  apiKeyId: string | null;
  userId: string | null;
  cliClientId: string | null;
}

export function reviewerOf(actor: OperationActor): Reviewer {
  if (actor.kind === 'api_key') return { apiKeyId: actor.keyId, userId: null, cliClientId: null };
  return { apiKeyId: null, userId: actor.userId, cliClientId: actor.kind === 'cli' || actor.kind === 'setup' ? actor.clientId : null };
}
