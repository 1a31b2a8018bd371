import type { SetupScope } from '../oauth/rules.js';
import type { CliScopeSuffix, WorkspaceScope } from './scopes.js';

/**
 * What an authentication hook demands, readable from the route table: the API reference
 * (management/apiDocs) documents each route's security from the hooks the route really runs.
 */
export type AuthRequirement =
  /**
   * A workspace API key; `cli` says what an account CLI access token gets on the route: accepted
   * with `service:cli:` + the same scope and `X-Service-Workspace`, or refused (403
   * `cli_operation_forbidden`). `setup`: the setup scope that lets a setup OAuth token in.
   */
  | { kind: 'apiKey'; scope: WorkspaceScope; cli: 'allow' | 'deny'; setup?: SetupScope }
  | { kind: 'session'; allowUnverified: boolean }
  /** Account CLI OAuth: `scope` null on account routes; `workspace` when the route takes `X-Service-Workspace`. */
  | { kind: 'cli'; scope: CliScopeSuffix | null; workspace: boolean }
  | { kind: 'foreignOriginCheck' };

const requirements = new WeakMap<object, AuthRequirement>();

export function declareAuth<T extends object>(hook: T, requirement: AuthRequirement): T {
  requirements.set(hook, requirement);
  return hook;
}

export function authRequirementOf(hook: unknown): AuthRequirement | undefined {
  return typeof hook === 'function' ? requirements.get(hook) : undefined;
}
