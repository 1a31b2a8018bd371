// 02 "Second-mode setup" apply: the reviewed connection, its first credential and the copied
// drafts and disabled rules, with the receipt and audit row, in one transaction.

import type pg from 'pg';
import { nextRevision } from '../../shared/db/revision.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { bumpCredentialEpoch } from '../../shared/redis.js';
import type { OperationActor } from '../auth/principal.js';
import { findConnectionForWorkspace, insertConnection, type ConnectionRecord } from '../connections/connectionStore.js';
import { connectionView } from '../connections/connectionView.js';
import { copyArtifacts } from '../configuration/artifacts.js';
import { reviewerOf, tenantIdOf } from '../configuration/reviewer.js';
import { proofOf } from '../configuration/snapshot.js';
import { insertActiveCredential } from '../credentials/credentialStore.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import type { Deps } from '../deps.js';
import { requireModeTopology, type ModeTopology } from '../environments/environmentStore.js';
import { readCanonicalIntegration } from '../integrations/integrationStore.js';
import { runOperation, type OperationOutcome, type OperationResponse } from '../operations/idempotency.js';
import { setupReceiptReplay } from './setupService.js';
import { buildSetupSnapshot, type SetupSnapshot } from './setupSnapshot.js';
import {
  findSetupIntegration,
  findSetupReview,
  findSlotConnectionId,
  markSetupCompleted,
  setIntegrationRevision,
  type SetupIntegration,
  type SetupReviewRecord,
} from './setupStore.js';
import { SETUP_ACTION, type SetupReceipt } from './setupViews.js';

export interface SetupApplyInput {
  operationId: string;
  approvalFingerprint: string;
  idempotencyKey: string;
}

const stale = () => new AppError('connection_preview_stale');

/** The reviewed state, locked: the review, the Integration, the source; refused when anything moved. */
interface CheckedReview {
  review: SetupReviewRecord;
  integration: SetupIntegration;
  topology: ModeTopology;
  snapshot: SetupSnapshot;
}

/**
 * The review's state machine and the rechecks of 02 "States and transitions", in the order
 * configuration copy uses: a review of this actor (404), its own approval fingerprint, not already
 * applied under another Idempotency-Key (stale: the review is spent), not expired, the
 * authorization epoch it was made under, the Integration (404 when deleted); then the reviewed
 * state rebuilt under the locks of the Integration and the source: equal configuration
 * fingerprints mean identity, source revision, destination environment and selection are
 * unchanged, and the destination slot must still be empty.
 */
async function checkReview(db: pg.PoolClient, deps: Deps, principal: OperationActor, input: SetupApplyInput): Promise<CheckedReview> {
  const review = await findSetupReview(
    db,
    { workspaceId: principal.workspaceId, reviewer: reviewerOf(principal), operationId: input.operationId },
    { forUpdate: true },
  );
  if (!review) throw new AppError('operation_not_found');
  if (input.approvalFingerprint !== review.fingerprint) throw new AppError('approval_mismatch');
  if (review.completedAt !== null) throw stale();
  if (deps.clock.nowMs() >= review.expiresAt.getTime()) throw new AppError('connection_preview_expired');
  if (review.authEpoch !== principal.authEpoch) throw stale();

  // Competing applies of one Integration queue on its row; the first to commit fills the slot.
  const integration = await findSetupIntegration(db, principal.workspaceId, review.integrationId, { forUpdate: true });
  if (!integration) throw new AppError('integration_not_found');
  if (integration.revision !== review.snapshot.identity.revision) throw stale();
  const topology = await requireModeTopology(db, principal.workspaceId);
  const source =
    review.sourceConnectionId === null
      ? null
      : await findConnectionForWorkspace(db, principal.workspaceId, review.sourceConnectionId, { forUpdate: true });
  if (review.sourceConnectionId !== null && !source) throw stale();
  if (await findSlotConnectionId(db, integration.id, review.destinationMode)) throw stale();
  const snapshot = await rebuildOrStale(db, principal, review, integration, source, topology);
  if (snapshot.fingerprint !== review.snapshot.fingerprint) throw stale();
  return { review, integration, topology, snapshot };
}

/** The snapshot as the current state gives it; a selection no longer valid is a changed configuration. */
async function rebuildOrStale(
  db: pg.PoolClient,
  principal: OperationActor,
  review: SetupReviewRecord,
  integration: SetupIntegration,
  source: ConnectionRecord | null,
  topology: ModeTopology,
): Promise<SetupSnapshot> {
  try {
    return await buildSetupSnapshot(db, {
      tenantId: await tenantIdOf(db, principal),
      workspaceId: principal.workspaceId,
      integration,
      source,
      destination: { mode: review.destinationMode, environmentId: topology[review.destinationMode].id },
      contractVersionIds: review.contractVersionIds,
      ruleIds: review.ruleIds,
    });
  } catch (error) {
    if (error instanceof AppError && error.code === 'configuration_selection_invalid') throw stale();
    throw error;
  }
}

/** Inserts the connection; the unique slot index is the last word on "destination absent". */
async function insertDestination(db: pg.PoolClient, principal: OperationActor, checked: CheckedReview, revision: string, now: Date) {
  try {
    return await insertConnection(db, {
      integrationId: checked.integration.id,
      workspaceId: principal.workspaceId,
      environmentId: checked.snapshot.destination.environmentId,
      mode: checked.review.destinationMode,
      revision,
      credentialStatus: 'active',
      credentialEpoch: 1,
      now,
    });
  } catch (error) {
    if (isUniqueViolation(error, 'connections_slot')) throw stale();
    throw error;
  }
}

/** The writes of a checked review; also answers the review's expiry for the last look before COMMIT. */
async function performSetup(
  db: pg.PoolClient,
  deps: Deps,
  principal: OperationActor,
  input: SetupApplyInput,
): Promise<{ outcome: OperationOutcome; expiresAt: Date }> {
  const checked = await checkReview(db, deps, principal, input);
  const { review, integration, snapshot } = checked;
  const now = deps.clock.now();
  // The shared workflow gained a connection: its revision moves, so any older review of it is stale.
  await setIntegrationRevision(db, integration.id, await nextRevision(db));
  const revision = await nextRevision(db);
  const created = await insertDestination(db, principal, checked, revision, now);
  const { ingestToken } = await insertActiveCredential(db, {
    connectionId: created.id,
    epoch: 1,
    encryptionKey: deps.config.secretEncryptionKey,
    now,
  });
  const copiedArtifacts = await copyArtifacts(db, {
    workspaceId: principal.workspaceId,
    destination: { connectionId: created.id, direction: integration.direction, protocol: integration.protocol },
    parts: snapshot,
    revision,
    apiKeyId: reviewerOf(principal).apiKeyId,
    now,
    staleCode: 'connection_preview_stale',
  });
  await markSetupCompleted(db, review.id, now);

  const connection = (await findConnectionForWorkspace(db, principal.workspaceId, created.id))!;
  const receipt: SetupReceipt = {
    operationId: review.id,
    action: SETUP_ACTION,
    status: 'completed',
    connectionId: created.id,
    workspaceIntegrationId: integration.id,
    mode: review.destinationMode,
    revision,
    completedAt: now.toISOString(),
    proof: proofOf(review),
    copiedArtifacts,
    integration: (await readCanonicalIntegration(db, principal.workspaceId, integration.id, checked.topology))!,
    connection: connectionView(connection),
    collectorConfiguration: { integrationKey: integration.integrationKey, connectionKey: created.connectionKey },
  };
  const outcome: OperationOutcome = {
    operationId: review.id,
    statusCode: 201,
    response: {
      ...receipt,
      collectorConfiguration: { ...receipt.collectorConfiguration, ingestToken },
      replayed: false,
      historical: false,
      credentialRecoveryRequired: false,
    },
    receipt: receipt as unknown as Record<string, unknown>,
    integrationId: integration.id,
    connectionId: created.id,
    recordedRevision: revision,
    audit: {
      action: SETUP_ACTION,
      targetId: created.id,
      metadata: {
        workspaceIntegrationId: integration.id,
        mode: review.destinationMode,
        environmentId: snapshot.destination.environmentId,
        revision,
        sourceConnectionId: review.sourceConnectionId,
        contracts: copiedArtifacts.contracts.length,
        rules: copiedArtifacts.rules.length,
      },
    },
  };
  return { outcome, expiresAt: review.expiresAt };
}

/**
 * POST /v1/connection-setup/{operationId}/apply. Under the one idempotency mechanism: an identical
 * retry with the same key is the 200 credential-free receipt; otherwise the review is rechecked
 * (checkReview) and the connection, its credential (sealed and hashed, 00-decisions §4), the
 * copied drafts and disabled rules, the receipt and the audit row commit together, after the
 * final authority check and a last look at the review's expiry: a review or key that expires
 * during the apply rolls everything back. The ingest edge's credential epoch moves before and
 * after COMMIT, as on Integration creation.
 */
export async function applySetup(deps: Deps, principal: OperationActor, input: SetupApplyInput): Promise<OperationResponse> {
  requireCanonicalWorkspace(principal);
  if (!hasIdForm(input.operationId, 'consetup_')) throw new AppError('operation_not_found');
  let expiresAtMs = Number.POSITIVE_INFINITY;
  const result = await runOperation(
    deps,
    {
      kind: SETUP_ACTION,
      principal,
      scope: 'integrations:manage',
      idempotencyKey: input.idempotencyKey,
      request: { operationId: input.operationId, body: { approvalFingerprint: input.approvalFingerprint } },
      // Authority that moved under the apply is a change since the review: review again.
      epochChangedCode: 'connection_preview_stale',
      replay: (stored, db) => setupReceiptReplay(db, principal, stored),
      beforeCommit: async (outcome) => {
        if (deps.clock.nowMs() >= expiresAtMs) throw new AppError('connection_preview_expired');
        await bumpCredentialEpoch(deps.redis, principal.accountId, outcome.connectionId!);
      },
    },
    async (db) => {
      const { outcome, expiresAt } = await performSetup(db, deps, principal, input);
      expiresAtMs = expiresAt.getTime();
      return outcome;
    },
  );
  if (result.statusCode === 201) {
    // Committed: the token exists only in this response, so a Redis failure here must not turn it
    // into an error (the bump before COMMIT already moved the epoch).
    await bumpCredentialEpoch(deps.redis, principal.accountId, String(result.body.connectionId)).catch(() => undefined);
  }
  return result;
}
