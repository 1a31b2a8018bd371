// 02 Reconciliation rules: reads, and create, update and delete under the reviewed configuration
// revision, each with its receipt and redacted audit in the one operation transaction
// (operations/idempotency.ts), and within the workspace's rule-mutation rate.

import type pg from 'pg';
import { inReadSnapshot } from '../../shared/db/transaction.js';
import { nextRevision } from '../../shared/db/revision.js';
import { enqueueRuleChange, type RuleChangeJob } from '../../shared/analysis/ruleChangeJob.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import { RedisKeys } from '../../shared/redis.js';
import type { WorkspacePrincipal, OperationActor } from '../auth/principal.js';
import type { ConnectionRecord } from '../connections/connectionStore.js';
import { isHistoricalReceipt, loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { Deps } from '../deps.js';
import { readOwnOperation, runOperation, type OperationResponse, type StoredOperation } from '../operations/idempotency.js';
import { reserveSlot } from '../operations/rateWindow.js';
import { pageLimit } from '../pagination/pageLimit.js';
import { decodeRuleCursor, encodeRuleCursor } from './ruleCursor.js';
import {
  countRules,
  deleteRule,
  findRule,
  hasIncidentHistory,
  insertRule,
  listRules,
  setConnectionRevision,
  updateRule,
  type RuleDefinition,
  type RuleRecord,
} from './ruleStore.js';

export const DEFAULT_RULE_LIMIT = 25;
/** 02 Limits: 60 new rule mutations per workspace per minute. */
export const RULE_MUTATIONS_PER_MINUTE = 60;

export type RuleAction = 'create' | 'update' | 'delete';
const KINDS: Record<RuleAction, RuleChangeJob['action']> = { create: 'rule.create', update: 'rule.update', delete: 'rule.delete' };

/** 02 Reconciliation rule, as every route shows it. */
export interface RuleView {
  id: string;
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
  enabled: boolean;
  lastEvaluatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function ruleView(rule: RuleRecord): RuleView {
  return {
    id: rule.id,
    sourceEventType: rule.sourceEventType,
    expectedObjectType: rule.expectedObjectType,
    maxDelayMs: rule.maxDelayMs,
    enabled: rule.enabled,
    lastEvaluatedAt: rule.lastEvaluatedAt?.toISOString() ?? null,
    createdAt: rule.createdAt.toISOString(),
    updatedAt: rule.updatedAt.toISOString(),
  };
}

interface RuleContext {
  connectionId: string;
  workspaceIntegrationId: string;
  mode: string;
  revision: string;
}

const contextOf = (connection: ConnectionRecord): RuleContext => ({
  connectionId: connection.id,
  workspaceIntegrationId: connection.integrationId,
  mode: connection.mode,
  revision: connection.revision,
});

function loadConnection(
  db: pg.Pool | pg.PoolClient,
  principal: OperationActor,
  connectionId: string,
  forUpdate = false,
): Promise<ConnectionRecord> {
  return loadWorkspaceConnection(db, principal.workspaceId, connectionId, { forUpdate });
}

async function loadRule(db: pg.Pool | pg.PoolClient, connectionId: string, ruleId: string, forUpdate = false): Promise<RuleRecord> {
  const rule = hasIdForm(ruleId, 'rule_') ? await findRule(db, connectionId, ruleId, { forUpdate }) : null;
  if (!rule) throw new AppError('expected_outcome_not_found');
  return rule;
}

/** GET …/reconciliation-rules: oldest first, a cursor bound to the connection and its revision. */
export async function listConnectionRules(
  deps: Deps,
  principal: WorkspacePrincipal,
  connectionId: string,
  query: { limit?: string; cursor?: string },
): Promise<RuleContext & { rules: RuleView[]; nextCursor: string | null }> {
  requireCanonicalWorkspace(principal);
  const limit = pageLimit(query.limit, DEFAULT_RULE_LIMIT, 'invalid_rule_request');
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await loadConnection(db, principal, connectionId);
    return { ...contextOf(connection), ...(await readRulePage(deps, db, connection, query.cursor, limit)) };
  });
}

/** One page of a connection's rules in the caller's read snapshot (the API list and the console read). */
export async function readRulePage(
  deps: Deps,
  db: pg.PoolClient,
  connection: ConnectionRecord,
  cursor: string | undefined,
  limit: number,
): Promise<{ rules: RuleView[]; nextCursor: string | null }> {
  const secret = deps.config.secretEncryptionKey;
  const after = cursor === undefined ? null : decodeRuleCursor(secret, cursor, connection.id, connection.revision);
  const rows = await listRules(db, connection.id, after, limit);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rules: page.map(ruleView),
    nextCursor: rows.length > limit && last ? encodeRuleCursor(secret, connection.id, connection.revision, last) : null,
  };
}

/** GET …/reconciliation-rules/{ruleId}. */
export async function readConnectionRule(
  deps: Deps,
  principal: WorkspacePrincipal,
  connectionId: string,
  ruleId: string,
): Promise<RuleContext & { rule: RuleView }> {
  requireCanonicalWorkspace(principal);
  return inReadSnapshot(deps.pool, async (db) => {
    const connection = await loadConnection(db, principal, connectionId);
    return { ...contextOf(connection), rule: ruleView(await loadRule(db, connection.id, ruleId)) };
  });
}

/** The body of a mutation, as validated by the route's schema. */
export interface RuleMutationBody extends Partial<RuleDefinition> {
  expectedRevision: string;
}

export interface RuleMutationInput {
  action: RuleAction;
  connectionId: string;
  /** Absent for create. */
  ruleId?: string;
  body: RuleMutationBody;
  idempotencyKey: string;
}

/** The replay of a stored receipt: `historical` is computed now (the revision moved or the connection is gone). */
async function receiptReplay(
  db: pg.Pool | pg.PoolClient,
  principal: OperationActor,
  stored: StoredOperation,
): Promise<Record<string, unknown>> {
  return { ...stored.receipt, replayed: true, historical: await isHistoricalReceipt(db, principal.workspaceId, stored) };
}

/** The definition after the mutation: create sets every field, update keeps what it omits. */
function definitionAfter(action: RuleAction, body: RuleMutationBody, current: RuleRecord | null): RuleDefinition {
  if (action === 'create' || !current) {
    return {
      sourceEventType: body.sourceEventType!,
      expectedObjectType: body.expectedObjectType!,
      maxDelayMs: body.maxDelayMs!,
      enabled: body.enabled ?? false,
    };
  }
  return {
    sourceEventType: body.sourceEventType ?? current.sourceEventType,
    expectedObjectType: body.expectedObjectType ?? current.expectedObjectType,
    maxDelayMs: body.maxDelayMs ?? current.maxDelayMs,
    enabled: body.enabled ?? current.enabled,
  };
}

/**
 * Create, update or delete one rule. In one transaction (runOperation): the connection row is
 * locked and its revision must be the reviewed one (409 `connection_configuration_changed`), the
 * change takes a new configuration revision, and the receipt and the audit row commit with it.
 * A new mutation takes a slot of the workspace's minute (429 `rate_limited`); an identical retry
 * or a refused mutation gives its slot back. A creation past the connection's cap of rules is
 * 409 `expected_outcome_limit_reached`.
 */
export async function mutateRule(deps: Deps, principal: OperationActor, input: RuleMutationInput): Promise<OperationResponse> {
  requireCanonicalWorkspace(principal);
  const kind = KINDS[input.action];
  return runOperation(
    deps,
    {
      kind,
      principal,
      scope: 'integrations:manage',
      idempotencyKey: input.idempotencyKey,
      request: { connectionId: input.connectionId, ruleId: input.ruleId ?? null, body: input.body },
      epochChangedCode: 'connection_configuration_changed',
      replay: (stored, db) => receiptReplay(db, principal, stored),
      reserve: () =>
        reserveSlot(
          deps.redis,
          { key: RedisKeys.ruleMutations(principal.workspaceId), windowMs: 60_000, limit: RULE_MUTATIONS_PER_MINUTE, code: 'rate_limited' },
          deps.clock.nowMs(),
        ),
    },
    async (db, { requestFingerprint }) => {
      const connection = await loadConnection(db, principal, input.connectionId, true);
      const current = input.ruleId === undefined ? null : await loadRule(db, connection.id, input.ruleId, true);
      if (connection.revision !== input.body.expectedRevision) throw new AppError('connection_configuration_changed');
      if (input.action === 'delete' && current && (await hasIncidentHistory(db, current.id)))
        throw new AppError('expected_outcome_has_incident_history');
      // Every rule costs the analyzer work per batch of its connection: a connection holds a bounded number.
      const limit = deps.config.management.rulesPerConnection;
      if (input.action === 'create' && (await countRules(db, connection.id)) >= limit)
        throw new AppError('expected_outcome_limit_reached', { extra: { limit } });
      const now = deps.clock.now();
      const revision = await nextRevision(db);
      let rule: RuleRecord;
      if (input.action === 'create') {
        rule = await insertRule(db, {
          id: newId('rule_'),
          connectionId: connection.id,
          workspaceId: principal.workspaceId,
          definition: definitionAfter('create', input.body, null),
          now,
        });
      } else if (input.action === 'update') {
        rule = await updateRule(db, current!.id, definitionAfter('update', input.body, current), now);
      } else {
        rule = current!;
        await deleteRule(db, rule.id);
      }
      await setConnectionRevision(db, connection.id, revision);
      await enqueueRuleChange(db, { connectionId: connection.id, ruleId: rule.id, action: kind, revision }, now);

      const operationId = newId('ruleop_');
      // Delete keeps the removed definition (02 Rule mutation receipt).
      const receipt = {
        connectionId: connection.id,
        workspaceIntegrationId: connection.integrationId,
        mode: connection.mode,
        revision,
        operationId,
        action: kind,
        status: 'completed',
        expectedRevision: input.body.expectedRevision,
        requestFingerprint,
        completedAt: now.toISOString(),
        rule: ruleView(rule),
      };
      return {
        operationId,
        statusCode: input.action === 'create' ? 201 : 200,
        response: { ...receipt, replayed: false, historical: false },
        receipt,
        integrationId: connection.integrationId,
        connectionId: connection.id,
        recordedRevision: revision,
        // Redacted: ids and the revision; the rule's types are configuration, not payload values.
        audit: { action: kind, targetId: rule.id, metadata: { connectionId: connection.id, revision, enabled: rule.enabled } },
      };
    },
  );
}

/** GET …/rule-operations/{operationId}: the completed receipt, for the key or console user that performed it. */
export async function readRuleOperation(deps: Deps, principal: OperationActor, operationId: string): Promise<Record<string, unknown>> {
  requireCanonicalWorkspace(principal);
  if (!hasIdForm(operationId, 'ruleop_')) throw new AppError('operation_not_found');
  const stored = await readOwnOperation(deps, principal, operationId, Object.values(KINDS));
  return receiptReplay(deps.pool, principal, stored);
}
