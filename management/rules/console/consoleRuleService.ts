// 02 "Console rule routes (browser session)": the session adapters of the rule routes. They
// run the API's own service (ruleService.ts) with the signed-in owner or admin as the operation
// actor, so revisions, uniqueness, the mutation rate, receipts and audit are the same.

import { inReadSnapshot } from '../../../shared/db/transaction.js';
import type { SessionPrincipal } from '../../auth/principal.js';
import { activeWorkspaceManager, requireWorkspaceManager } from '../../auth/workspaceUserAuth.js';
import type { ConnectionRecord } from '../../connections/connectionStore.js';
import { loadWorkspaceConnection } from '../../connections/workspaceConnection.js';
import type { Deps } from '../../deps.js';
import type { OperationResponse } from '../../operations/idempotency.js';
import { pageLimit } from '../../pagination/pageLimit.js';
import { DEFAULT_RULE_LIMIT, mutateRule, readRulePage, readRuleOperation, type RuleMutationInput, type RuleView } from '../ruleService.js';

export interface ExpectedOutcomesView {
  connectionId: string;
  workspaceIntegrationId: string;
  integrationName: string;
  mode: 'sandbox' | 'live';
  environment: { id: string; category: string; mode: 'sandbox' | 'live' };
  revision: string;
  /** Whether this user may change the rules now: an active canonical workspace and a Sandbox or Live environment. */
  managementPermission: boolean;
  expectedOutcomes: RuleView[];
  nextCursor: string | null;
}

/** A legacy environment record (Development, Staging, Production) stays read-only until migration (02). */
const isCanonicalEnvironment = (connection: ConnectionRecord) =>
  connection.environmentCategory === 'sandbox' || connection.environmentCategory === 'live';

/**
 * GET …/expected-outcomes: one page of the connection's rules (the API list's `limit` and
 * cursor) with what the console displays. Archived and legacy workspaces stay readable, with
 * `managementPermission` false.
 */
export async function readExpectedOutcomes(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  connectionId: string,
  query: { limit?: string; cursor?: string },
): Promise<ExpectedOutcomesView> {
  const limit = pageLimit(query.limit, DEFAULT_RULE_LIMIT, 'invalid_rule_request');
  return inReadSnapshot(deps.pool, async (db) => {
    const { actor, status } = await requireWorkspaceManager(db, session, slug);
    const connection = await loadWorkspaceConnection(db, actor.workspaceId, connectionId);
    const page = await readRulePage(deps, db, connection, query.cursor, limit);
    return {
      connectionId: connection.id,
      workspaceIntegrationId: connection.integrationId,
      integrationName: connection.name,
      mode: connection.environmentMode,
      environment: { id: connection.environmentId, category: connection.environmentCategory, mode: connection.environmentMode },
      revision: connection.revision,
      managementPermission: status === 'active' && actor.model === 'canonical' && isCanonicalEnvironment(connection),
      expectedOutcomes: page.rules,
      nextCursor: page.nextCursor,
    };
  });
}

/**
 * POST, PATCH and DELETE …/expected-outcomes: the API's mutation performed by the signed-in
 * owner or admin. An archived workspace accepts no mutation (409 `workspace_unavailable`); the
 * operation's transaction checks the role, the session and the workspace again.
 */
export async function mutateExpectedOutcome(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  input: RuleMutationInput,
): Promise<OperationResponse> {
  const result = await mutateRule(deps, await activeWorkspaceManager(deps.pool, session, slug), input);
  return { statusCode: result.statusCode, body: { expectedOutcome: result.body.rule, operation: result.body } };
}

/**
 * GET …/rule-operations/{operationId}: the completed receipt, for the console user who performed
 * it while still an owner or admin; in an archived workspace too (02).
 */
export async function readConsoleRuleOperation(
  deps: Deps,
  session: SessionPrincipal,
  slug: string,
  operationId: string,
): Promise<Record<string, unknown>> {
  const { actor } = await requireWorkspaceManager(deps.pool, session, slug);
  return readRuleOperation(deps, actor, operationId);
}
