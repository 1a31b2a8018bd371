// 02 "Second-mode setup": the preview (a reviewed snapshot with a fingerprint and a 10-minute
// expiry, nothing created) and the status read. The apply is in setupApply.ts.

import type pg from 'pg';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import { RedisKeys } from '../../shared/redis.js';
import type { OperationActor } from '../auth/principal.js';
import { findConnectionForWorkspace, type ConnectionRecord, type Mode } from '../connections/connectionStore.js';
import { assertSnapshotSize } from '../configuration/artifacts.js';
import { auditActorOf, recheckReviewer, reviewerOf, tenantIdOf } from '../configuration/reviewer.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { Deps } from '../deps.js';
import { requireModeTopology, type ModeTopology } from '../environments/environmentStore.js';
import { PREVIEWS_PER_MINUTE, REVIEW_LIFETIME_MS } from '../configuration/configurationService.js';
import { isHistoricalReceipt } from '../connections/workspaceConnection.js';
import { recordAudit } from '../operations/audit.js';
import { readOwnOperation, type StoredOperation } from '../operations/idempotency.js';
import { reserveSlot, type RateSlot } from '../operations/rateWindow.js';
import { approvalFingerprint, buildSetupSnapshot } from './setupSnapshot.js';
import { findSetupIntegration, findSetupReview, findSlotConnectionId, insertSetupReview } from './setupStore.js';
import { reviewView, SETUP_ACTION, type SetupReviewView } from './setupViews.js';

// 02 Limits: one review lifetime, and one preview minute shared by setup, copy and compensation.
export { PREVIEWS_PER_MINUTE, REVIEW_LIFETIME_MS } from '../configuration/configurationService.js';

/** The preview body as the route's schema leaves it (selections default to empty). */
export interface SetupPreviewBody {
  destinationMode: Mode;
  contractVersionIds: string[];
  ruleIds: string[];
  sourceConnectionId?: string;
}

export const otherMode = (mode: Mode): Mode => (mode === 'sandbox' ? 'live' : 'sandbox');

/**
 * The source a selection comes from: the Integration's live connection of the other canonical
 * mode in this workspace. Anything else (a malformed or unknown id, another workspace's or
 * Integration's connection, the destination mode) is 400 `configuration_scope_mismatch`.
 */
async function loadSource(
  db: pg.PoolClient,
  input: {
    workspaceId: string;
    integrationId: string;
    sourceConnectionId: string;
    destinationMode: Mode;
    topology: ModeTopology;
  },
): Promise<ConnectionRecord> {
  const source = hasIdForm(input.sourceConnectionId, 'int_')
    ? await findConnectionForWorkspace(db, input.workspaceId, input.sourceConnectionId)
    : null;
  const mode = otherMode(input.destinationMode);
  if (!source || source.integrationId !== input.integrationId || source.mode !== mode || source.environmentId !== input.topology[mode].id) {
    throw new AppError('configuration_scope_mismatch');
  }
  return source;
}

const previewSlot = (deps: Deps, principal: OperationActor): Promise<RateSlot> =>
  reserveSlot(
    deps.redis,
    { key: RedisKeys.configurationPreviews(principal.workspaceId), windowMs: 60_000, limit: PREVIEWS_PER_MINUTE, code: 'rate_limited' },
    deps.clock.nowMs(),
  );

/**
 * POST /v1/integrations/{workspaceIntegrationId}/connections/preview. A slot of the workspace's
 * preview minute (given back when the preview is refused), then in one REPEATABLE READ
 * transaction: the Integration (404), the destination slot still empty (409
 * `connection_already_configured`: copy is the way to fill an existing one), the source and
 * selection (400), the 1 MiB bound (409), the actor's authority, then the stored review and its
 * audit row. Nothing else is created.
 */
export async function previewSetup(
  deps: Deps,
  principal: OperationActor,
  integrationId: string,
  body: SetupPreviewBody,
): Promise<SetupReviewView> {
  requireCanonicalWorkspace(principal);
  const slot = await previewSlot(deps, principal);
  try {
    return await withTransaction(deps.pool, async (db) => {
      // One consistent read of everything the snapshot holds.
      await db.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const topology = await requireModeTopology(db, principal.workspaceId);
      const integration = hasIdForm(integrationId, 'wint_') ? await findSetupIntegration(db, principal.workspaceId, integrationId) : null;
      if (!integration) throw new AppError('integration_not_found');
      if (await findSlotConnectionId(db, integration.id, body.destinationMode)) throw new AppError('connection_already_configured');
      const source =
        body.sourceConnectionId === undefined
          ? null
          : await loadSource(db, {
              workspaceId: principal.workspaceId,
              integrationId: integration.id,
              sourceConnectionId: body.sourceConnectionId,
              destinationMode: body.destinationMode,
              topology,
            });
      const snapshot = await buildSetupSnapshot(db, {
        tenantId: await tenantIdOf(db, principal),
        workspaceId: principal.workspaceId,
        integration,
        source,
        destination: { mode: body.destinationMode, environmentId: topology[body.destinationMode].id },
        contractVersionIds: body.contractVersionIds,
        ruleIds: body.ruleIds,
      });
      assertSnapshotSize(snapshot);
      await recheckReviewer(db, deps, principal);

      const now = deps.clock.now();
      const id = newId('consetup_');
      const expiresAt = new Date(now.getTime() + REVIEW_LIFETIME_MS);
      const review = {
        id,
        workspaceId: principal.workspaceId,
        ...reviewerOf(principal),
        authEpoch: principal.authEpoch,
        integrationId: integration.id,
        destinationMode: body.destinationMode,
        sourceConnectionId: source?.id ?? null,
        contractVersionIds: body.contractVersionIds,
        ruleIds: body.ruleIds,
        snapshot,
        fingerprint: approvalFingerprint({ operationId: id, action: SETUP_ACTION, expiresAt: expiresAt.toISOString(), snapshot }),
        expiresAt,
        createdAt: now,
      };
      await insertSetupReview(db, review);
      await recordAudit(db, {
        workspaceId: principal.workspaceId,
        ...auditActorOf(principal),
        action: `${SETUP_ACTION}.preview`,
        targetId: integration.id,
        metadata: {
          operationId: review.id,
          mode: review.destinationMode,
          sourceConnectionId: review.sourceConnectionId,
          contracts: snapshot.contracts.length,
          rules: snapshot.rules.length,
        },
        at: now,
      });
      return reviewView(review, now.getTime());
    });
  } catch (error) {
    await slot.release().catch(() => undefined);
    throw error;
  }
}

/** A completed setup's receipt as replays and status reads show it: never the token. */
export async function setupReceiptReplay(
  db: pg.Pool | pg.PoolClient,
  principal: OperationActor,
  stored: StoredOperation,
): Promise<Record<string, unknown>> {
  return {
    ...stored.receipt,
    replayed: true,
    historical: await isHistoricalReceipt(db, principal.workspaceId, stored),
    credentialRecoveryRequired: true,
  };
}

/**
 * GET /v1/connection-setup/{operationId}: the pending review, `expired` past its expiry (server
 * time now, whenever the request was sent), or the completed, credential-free receipt. Only the
 * key or user that made the preview reads it; every other caller gets 404 `operation_not_found`.
 */
export async function readSetup(deps: Deps, principal: OperationActor, operationId: string): Promise<Record<string, unknown>> {
  requireCanonicalWorkspace(principal);
  const review = hasIdForm(operationId, 'consetup_')
    ? await findSetupReview(deps.pool, { workspaceId: principal.workspaceId, reviewer: reviewerOf(principal), operationId })
    : null;
  if (!review) throw new AppError('operation_not_found');
  if (review.completedAt === null) return { ...reviewView(review, deps.clock.nowMs()) };
  const stored = await readOwnOperation(deps, principal, operationId, [SETUP_ACTION]);
  return setupReceiptReplay(deps.pool, principal, stored);
}
