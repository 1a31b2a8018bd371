import type { CliScope, OFFLINE_ACCESS_SCOPE } from '../auth/scopes.js';
import type { SetupScope } from '../oauth/rules.js';

/**
 * The account CLI's permissions in words, for the consent page (03 Account CLI OAuth 2: "browser
 * consent shows the exact permissions"). Keyed by the literal scope the CLI requests, which the
 * page shows beside the words. Typed by the scopes a grant can hold, so a new scope needs its words
 * here; a grant's scope without words would still be listed, by its literal name alone.
 */
export const CLI_SCOPE_WORDS: Readonly<Record<CliScope | typeof OFFLINE_ACCESS_SCOPE, string>> = {
  'service:cli:integrations:read': 'See your Integrations, their connections and modes',
  'service:cli:integrations:manage': 'Change Integrations and connections: metadata, modes and reviewed deletion',
  'service:cli:contracts:read': 'Read API contracts and their versions',
  'service:cli:contracts:write': 'Register new contract versions',
  'service:cli:contracts:activate': 'Activate a contract version',
  'service:cli:observations:read': 'Read observations and connection verification',
  'service:cli:incidents:read': 'Read incidents and their findings',
  'service:cli:repairs:read': 'Read repair proposals',
  'service:cli:repairs:create': 'Request repair proposals',
  'service:cli:repairs:approve': 'Approve or reject repair proposals',
  'service:cli:repairs:export': 'Export approved repairs',
  'service:cli:replays:read': 'Read replay datasets and runs',
  offline_access: 'Stay signed in: renew its access without asking you again, until you sign the CLI out or revoke it',
};

/** The local setup tool's permissions in words (01 Authentication 4), for its one bound Integration. */
export const SETUP_SCOPE_WORDS: Readonly<Record<SetupScope, string>> = {
  'service:setup:contracts:read': 'List the API contracts of this Integration in this environment',
  'service:setup:integrations:delete': 'Delete this Integration, or this connection of it, after a reviewed confirmation',
};

/** The words for one requested scope, or null when the page has none (it then shows the name alone). */
export function scopeInWords(scope: string): string | null {
  if (Object.hasOwn(SETUP_SCOPE_WORDS, scope)) return SETUP_SCOPE_WORDS[scope as SetupScope];
  return Object.hasOwn(CLI_SCOPE_WORDS, scope) ? CLI_SCOPE_WORDS[scope as keyof typeof CLI_SCOPE_WORDS] : null;
}
