import type { Mode } from '../connections/connectionStore.js';
import type { ConnectionView } from '../connections/connectionView.js';
import type { CopiedArtifacts } from '../configuration/artifacts.js';
import type { Proof } from '../configuration/snapshot.js';
import type { CanonicalIntegration } from '../integrations/integrationStore.js';
import type { SetupSnapshot } from './setupSnapshot.js';
import type { SetupReviewRecord } from './setupStore.js';

export const SETUP_ACTION = 'connection.setup';

/** A pending or expired review (preview response and status read). */
export interface SetupReviewView {
  operationId: string;
  action: typeof SETUP_ACTION;
  status: 'previewed' | 'expired';
  workspaceIntegrationId: string;
  mode: Mode;
  expiresAt: string;
  fingerprint: string;
  snapshot: SetupSnapshot;
}

/** 02: past its expiry (server time, never extended by reads) a review reads as `expired`. */
export function reviewView(review: Omit<SetupReviewRecord, 'completedAt'>, nowMs: number): SetupReviewView {
  return {
    operationId: review.id,
    action: SETUP_ACTION,
    status: nowMs >= review.expiresAt.getTime() ? 'expired' : 'previewed',
    workspaceIntegrationId: review.integrationId,
    mode: review.destinationMode,
    expiresAt: review.expiresAt.toISOString(),
    fingerprint: review.fingerprint,
    snapshot: review.snapshot,
  };
}

/**
 * The stored, credential-free receipt of a completed setup: the copy receipt's fields (02
 * "Operation receipt (completed)") plus the shared workflow and the new connection as they were
 * at completion, and the collector configuration without its token.
 */
export interface SetupReceipt {
  operationId: string;
  action: typeof SETUP_ACTION;
  status: 'completed';
  connectionId: string;
  workspaceIntegrationId: string;
  mode: Mode;
  /** The new connection's revision after the transaction. */
  revision: string;
  completedAt: string;
  proof: Proof;
  copiedArtifacts: CopiedArtifacts;
  integration: CanonicalIntegration;
  /** The new runtime connection as 01 "Connection (single read)" shows it. */
  connection: ConnectionView;
  collectorConfiguration: { integrationKey: string; connectionKey: string };
}
