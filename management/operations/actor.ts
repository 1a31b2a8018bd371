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

/**
 * The SQL that matches the actor columns of a row to three parameters from `$first` on, in the
 * order of `reviewerParams`: one actor owns its reviews and operations, and no other reads them.
 */
export function reviewerMatches(first: number): string {
  return `api_key_id IS NOT DISTINCT FROM $${first} AND user_id IS NOT DISTINCT FROM $${first + 1} AND cli_client_id IS NOT DISTINCT FROM $${first + 2}`;
}

export function reviewerParams(reviewer: Reviewer): [string | null, string | null, string | null] {
  return [reviewer.apiKeyId, reviewer.userId, reviewer.cliClientId];
}

export function reviewerOf(actor: OperationActor): Reviewer {
  if (actor.kind === 'api_key') return { apiKeyId: actor.keyId, userId: null, cliClientId: null };
  return { apiKeyId: null, userId: actor.userId, cliClientId: actor.kind === 'cli' || actor.kind === 'setup' ? actor.clientId : null };
}
