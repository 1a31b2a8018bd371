import type { CredentialState } from '../credentials/credentialStore.js';
import type { DeletionAction, DeletionEvidence, DeletionSnapshot } from './deletionSnapshot.js';
import type { DeletionReviewRecord } from './deletionStore.js';

/** What a deletion route names: the Integration of the path and, for one connection, its `int_` id. */
export interface DeletionTarget {
  action: DeletionAction;
  workspaceIntegrationId: string;
  connectionId: string | null;
}

export const integrationTarget = (workspaceIntegrationId: string): DeletionTarget => ({
  action: 'integration.delete',
  workspaceIntegrationId,
  connectionId: null,
});

export const connectionTarget = (workspaceIntegrationId: string, connectionId: string): DeletionTarget => ({
  action: 'connection.delete',
  workspaceIntegrationId,
  connectionId,
});

/** A pending or expired review (preview response and status read). */
export interface DeletionReviewView {
  operationId: string;
  action: DeletionAction;
  status: 'previewed' | 'expired';
  workspaceIntegrationId: string;
  connectionId: string | null;
  expiresAt: string;
  fingerprint: string;
  snapshot: DeletionSnapshot;
  evidence: DeletionEvidence[];
}

/** Past its expiry (server time, never extended by reads) a review reads as `expired`. */
export function reviewView(review: Omit<DeletionReviewRecord, 'completedAt'>, nowMs: number): DeletionReviewView {
  return {
    operationId: review.id,
    action: review.action,
    status: nowMs >= review.expiresAt.getTime() ? 'expired' : 'previewed',
    workspaceIntegrationId: review.integrationId,
    connectionId: review.connectionId,
    expiresAt: review.expiresAt.toISOString(),
    fingerprint: review.fingerprint,
    snapshot: review.snapshot,
    evidence: review.evidence,
  };
}

/** The stored receipt of a completed deletion: evidence of the operation, never a token. */
export interface DeletionReceipt {
  operationId: string;
  action: DeletionAction;
  status: 'completed';
  workspaceIntegrationId: string;
  connectionId: string | null;
  /** The Integration name the confirmation presented (exactly the reviewed one). */
  name: string;
  /** The review's fingerprint the confirmation presented. */
  fingerprint: string;
  completedAt: string;
  /** The Integration's revision after the deletion, and whether it was deleted itself. */
  integrationRevision: string;
  integrationDeleted: boolean;
  /** Each deleted connection's 01 credential state after the deletion (`revoked` where a token was active). */
  credentials: CredentialState[];
}
