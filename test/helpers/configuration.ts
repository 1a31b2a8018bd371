import { markEvaluated } from '../../analyzer/ruleStore.js';
import type { CopiedArtifacts } from '../../management/configuration/artifacts.js';
import type { ReviewView } from '../../management/configuration/configurationService.js';
import type { Proof } from '../../management/configuration/snapshot.js';
import type { SetupReceipt, SetupReviewView } from '../../management/connectionSetup/setupViews.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { RULE_MUTATIONS_PER_MINUTE } from '../../management/rules/ruleService.js';
import { advanceClock, type TestContext } from './context.js';
import { registerDraft } from './contracts.js';
import { createRuleWithKey } from './rules.js';

/** 02 "Operation review (preview or expired)" of a configuration copy or compensation: the preview and status answers. */
export type ConfigurationReview = ReviewView;

/** 02 "Operation receipt (completed)" of a configuration copy or compensation: the apply and status answers. */
export interface ConfigurationReceipt {
  operationId: string;
  action: ConfigurationReview['action'];
  status: 'completed';
  connectionId: string;
  workspaceIntegrationId: string;
  mode: 'sandbox' | 'live';
  revision: string;
  completedAt: string;
  originalOperationId: string | null;
  proof: Proof;
  copiedArtifacts: CopiedArtifacts;
  replayed: boolean;
  historical: boolean;
}

/** A second-mode setup review (preview and status answers) and its completed receipt (apply answer). */
export type SetupReview = SetupReviewView;
export type { SetupReceipt };

/** 02 Operation receipt `proof` of an applied review (copy, compensation or setup), as the client can check it. */
export function expectedProof(review: { fingerprint: string; snapshot: { fingerprint: string } }): Record<string, string> {
  return {
    schema: 'service.configuration-operation/1',
    approvalFingerprint: review.fingerprint,
    configurationFingerprint: review.snapshot.fingerprint,
  };
}

/** 02 Limits, "Selection arrays": at most 100 identifiers each (the spec's number, not the service's constant). */
export const SELECTION_LIMIT = 100;

/**
 * Registers `count` small json-schema drafts and creates `count` rules on a connection through the
 * public routes, so that a selection of real source ids can sit exactly at (or just over) the
 * bound. Rules are created a minute of the workspace's rule-mutation rate at a time: the test
 * clock moves a minute before each batch.
 */
export async function seedSelectableArtifacts(
  ctx: TestContext,
  key: string,
  connectionId: string,
  count: number,
): Promise<{ contractVersionIds: string[]; ruleIds: string[] }> {
  const contractVersionIds: string[] = [];
  const ruleIds: string[] = [];
  for (let n = 0; n < count; n++) {
    const draft = await registerDraft(ctx, key, connectionId, {
      declaredVersion: `bound-${n}`,
      format: 'json-schema',
      document: { type: 'object', properties: { [`field_${n}`]: { type: 'string' } } },
      operation: { method: 'GET', routeTemplate: '/v1/orders', payloadLocation: 'response', statusSelector: '200' },
    });
    contractVersionIds.push(draft.contract.id);
  }
  for (let n = 0; n < count; n++) {
    if (n % RULE_MUTATIONS_PER_MINUTE === 0) await advanceClock(ctx, 60_000);
    const receipt = await createRuleWithKey(ctx, key, connectionId, {
      sourceEventType: `bound.${n}`,
      expectedObjectType: 'shipment',
      maxDelayMs: 60_000,
    });
    ruleIds.push(receipt.rule.id);
  }
  return { contractVersionIds, ruleIds };
}

/** Moves the rules' `lastEvaluatedAt` exactly as the analyzer does after evaluating them (analyzer/ruleStore.ts). */
export async function markRulesEvaluated(ctx: TestContext, ruleIds: readonly string[]): Promise<void> {
  await withTransaction(ctx.deps.pool, (db) => markEvaluated(db, ruleIds, ctx.deps.clock.now()));
}
