// 02 "Configuration copy and compensation (existing destination)": copy and compensation reviews
// and the status read. Apply is in configurationApply.ts. The caller is the operation actor: an API
// key on `/v1`, a console owner or admin through the browser-session adapters (console/).

import type pg from 'pg';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import { RedisKeys } from '../../shared/redis.js';
import type { OperationActor } from '../auth/principal.js';
import { findConnectionForWorkspace, type ConnectionRecord } from '../connections/connectionStore.js';
import { isHistoricalReceipt, loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { reserveSlot } from '../operations/rateWindow.js';
import type { StoredOperation } from '../operations/idempotency.js';
import { assertCompensable } from './compensation.js';
import { assertSnapshotSize, findDestinationConflicts, selectArtifacts, type CopiedArtifacts, type SnapshotParts } from './artifacts.js';
import {
  findCompletion,
  findIntegrationIdentity,
  findOwnReview,
  insertReview,
  type ConfigurationAction,
  type IntegrationIdentityRow,
  type ReviewRecord,
} from './configurationStore.js';
import { auditActorOf, recheckReviewer, reviewerOf, tenantIdOf } from './reviewer.js';
import { approvalFingerprint, buildSnapshot, type ReviewSnapshot } from './snapshot.js';

/** 02: a review lasts ten minutes from server time. */
export const REVIEW_LIFETIME_MS = 10 * 60_000;
/** 02 Limits: 30 previews per workspace per minute, shared by setup, copy and compensation. */
export const PREVIEWS_PER_MINUTE = 30;

/** 02 "Operation review (preview or expired)". */
export interface ReviewView {
  operationId: string;
  action: ConfigurationAction;
  status: 'previewed' | 'expired';
  expiresAt: string;
  fingerprint: string;
  originalOperationId: string | null;
  snapshot: ReviewSnapshot;
  copiedArtifacts: CopiedArtifacts | null;
}

export function reviewView(review: ReviewRecord, nowMs: number): ReviewView {
  return {
    operationId: review.id,
    action: review.action,
    status: nowMs >= review.expiresAt.getTime() ? 'expired' : 'previewed',
    expiresAt: review.expiresAt.toISOString(),
    fingerprint: review.fingerprint,
    originalOperationId: review.originalOperationId,
    snapshot: review.snapshot,
    copiedArtifacts: review.copiedArtifacts,
  };
}

/** The action an operation id names by its prefix, or null for any other id (answered 404). */
export function actionOfId(operationId: string): ConfigurationAction | null {
  if (hasIdForm(operationId, 'concopy_')) return 'configuration.copy';
  if (hasIdForm(operationId, 'concomp_')) return 'configuration.compensate';
  return null;
}

/** A completed receipt as replays and status reads show it: `historical` computed now. */
export async function receiptReplay(
  db: pg.Pool | pg.PoolClient,
  principal: OperationActor,
  stored: StoredOperation,
): Promise<Record<string, unknown>> {
  return { ...stored.receipt, replayed: true, historical: await isHistoricalReceipt(db, principal.workspaceId, stored) };
}

/**
 * Runs one preview: a slot of the workspace's preview minute (given back when the preview is
 * refused), then one REPEATABLE READ transaction so the snapshot is one consistent read, with
 * authority rechecked before the review and its audit row are written.
 */
async function preview(deps: Deps, principal: OperationActor, build: (db: pg.PoolClient) => Promise<ReviewRecord>): Promise<ReviewView> {
  requireCanonicalWorkspace(principal);
  const slot = await reserveSlot(
    deps.redis,
    { key: RedisKeys.configurationPreviews(principal.workspaceId), windowMs: 60_000, limit: PREVIEWS_PER_MINUTE, code: 'rate_limited' },
    deps.clock.nowMs(),
  );
  try {
    const review = await withTransaction(deps.pool, async (db) => {
      await db.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const built = await build(db);
      await recheckReviewer(db, deps, principal);
      await insertReview(db, built);
      await recordAudit(db, {
        workspaceId: principal.workspaceId,
        ...auditActorOf(principal),
        action: `${built.action}.preview`,
        targetId: built.id,
        metadata: {
          connectionId: built.destinationConnectionId,
          revision: built.destinationRevision,
          originalOperationId: built.originalOperationId,
          contracts: built.snapshot.contracts.length,
          rules: built.snapshot.rules.length,
        },
        at: built.createdAt,
      });
      return built;
    });
    return reviewView(review, deps.clock.nowMs());
  } catch (error) {
    await slot.release().catch(() => undefined);
    throw error;
  }
}

interface ReviewParts {
  id: string;
  action: ConfigurationAction;
  identity: IntegrationIdentityRow;
  destination: ConnectionRecord;
  source: ReviewSnapshot['source'];
  parts: SnapshotParts;
  originalOperationId: string | null;
  copiedArtifacts: CopiedArtifacts | null;
}

async function reviewRecord(
  deps: Deps,
  db: pg.PoolClient,
  principal: OperationActor,
  input: ReviewParts & { sourceConnectionId: string | null; sourceRevision: string | null },
): Promise<ReviewRecord> {
  const tenantId = await tenantIdOf(db, principal);
  const snapshot = buildSnapshot({
    identity: input.identity,
    tenantId,
    source: input.source,
    destination: input.destination,
    parts: input.parts,
  });
  assertSnapshotSize(snapshot);
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + REVIEW_LIFETIME_MS);
  return {
    id: input.id,
    action: input.action,
    workspaceId: principal.workspaceId,
    ...reviewerOf(principal),
    authEpoch: principal.authEpoch,
    integrationId: input.identity.id,
    integrationRevision: input.identity.revision,
    destinationConnectionId: input.destination.id,
    destinationRevision: input.destination.revision,
    destinationCredentialEpoch: input.destination.credentialEpoch,
    sourceConnectionId: input.sourceConnectionId,
    sourceRevision: input.sourceRevision,
    originalOperationId: input.originalOperationId,
    fingerprint: approvalFingerprint({
      operationId: input.id,
      action: input.action,
      expiresAt: expiresAt.toISOString(),
      originalOperationId: input.originalOperationId,
      copiedArtifacts: input.copiedArtifacts,
      snapshot,
    }),
    snapshot,
    copiedArtifacts: input.copiedArtifacts,
    expiresAt,
    createdAt: now,
  };
}

async function integrationOf(db: pg.PoolClient, principal: OperationActor, connection: ConnectionRecord): Promise<IntegrationIdentityRow> {
  const identity = await findIntegrationIdentity(db, principal.workspaceId, connection.integrationId);
  // A live connection's Integration is live (connectionStore joins it), so this is only a guard.
  if (!identity || identity.deleted) throw new AppError('integration_not_found');
  return identity;
}

/** The body of a copy preview, as validated by the route's schema. */
export interface CopyPreviewBody {
  sourceConnectionId: string;
  contractVersionIds?: string[];
  ruleIds?: string[];
}

/**
 * POST /v1/connections/{connectionId}/configuration-copy/preview. The source must be the other
 * mode connection of the destination's Integration (400 `configuration_scope_mismatch`: unknown,
 * foreign, the destination itself, another Integration's); the selection must name at least one
 * of the source's artifacts (400 `configuration_selection_invalid`) and none whose declared
 * version or rule pair the destination already has (409 `configuration_destination_conflict`).
 */
export async function previewCopy(
  deps: Deps,
  principal: OperationActor,
  destinationConnectionId: string,
  body: CopyPreviewBody,
): Promise<ReviewView> {
  return preview(deps, principal, async (db) => {
    const destination = await loadWorkspaceConnection(db, principal.workspaceId, destinationConnectionId);
    const source = hasIdForm(body.sourceConnectionId, 'int_')
      ? await findConnectionForWorkspace(db, principal.workspaceId, body.sourceConnectionId)
      : null;
    if (!source || source.integrationId !== destination.integrationId || source.id === destination.id || source.mode === destination.mode) {
      throw new AppError('configuration_scope_mismatch');
    }
    const contractVersionIds = body.contractVersionIds ?? [];
    const ruleIds = body.ruleIds ?? [];
    if (contractVersionIds.length + ruleIds.length === 0) throw new AppError('configuration_selection_invalid');
    const parts = await selectArtifacts(db, { workspaceId: principal.workspaceId, sourceConnection: source, contractVersionIds, ruleIds });
    await findDestinationConflicts(db, destination.id, parts, deps.config.management.rulesPerConnection);
    return reviewRecord(deps, db, principal, {
      id: newId('concopy_'),
      action: 'configuration.copy',
      identity: await integrationOf(db, principal, destination),
      destination,
      source: { connectionId: source.id, environmentId: source.environmentId, revision: source.revision },
      parts,
      originalOperationId: null,
      copiedArtifacts: null,
      sourceConnectionId: source.id,
      sourceRevision: source.revision,
    });
  });
}

/**
 * POST /v1/configuration-operations/{operationId}/compensation-preview: a review reversing a
 * completed copy of this actor. Its snapshot repeats the copy's source and artifacts with the
 * destination as it is now; `copiedArtifacts` names what apply would remove.
 */
export async function previewCompensation(deps: Deps, principal: OperationActor, operationId: string): Promise<ReviewView> {
  requireCanonicalWorkspace(principal);
  if (!hasIdForm(operationId, 'concopy_')) throw new AppError('operation_not_found');
  return preview(deps, principal, async (db) => {
    const copy = await findOwnReview(db, principal.workspaceId, reviewerOf(principal), operationId);
    if (copy?.action !== 'configuration.copy') throw new AppError('operation_not_found');
    const completion = await findCompletion(db, principal.workspaceId, copy.id);
    if (!completion) throw new AppError('configuration_compensation_unavailable');
    const destination = await findConnectionForWorkspace(db, principal.workspaceId, copy.destinationConnectionId);
    const copied = await assertCompensable(db, { review: copy, completion }, destination);
    return reviewRecord(deps, db, principal, {
      id: newId('concomp_'),
      action: 'configuration.compensate',
      identity: await integrationOf(db, principal, destination!),
      destination: destination!,
      source: copy.snapshot.source,
      parts: { contracts: copy.snapshot.contracts, rules: copy.snapshot.rules },
      originalOperationId: copy.id,
      copiedArtifacts: copied,
      sourceConnectionId: null,
      sourceRevision: null,
    });
  });
}

/**
 * GET /v1/configuration-operations/{operationId}: the completed receipt, else the review
 * (`previewed`, or `expired` with its original fingerprint, snapshot and expiry). Only the key
 * or user that made the review reads it; anything else is 404 `operation_not_found`.
 */
export async function readConfigurationOperation(
  deps: Deps,
  principal: OperationActor,
  operationId: string,
): Promise<Record<string, unknown>> {
  requireCanonicalWorkspace(principal);
  if (!actionOfId(operationId)) throw new AppError('operation_not_found');
  const review = await findOwnReview(deps.pool, principal.workspaceId, reviewerOf(principal), operationId);
  if (!review) throw new AppError('operation_not_found');
  const completion = await findCompletion(deps.pool, principal.workspaceId, review.id);
  if (completion) return receiptReplay(deps.pool, principal, completion);
  return { ...reviewView(review, deps.clock.nowMs()) };
}
