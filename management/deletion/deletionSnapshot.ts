// The whitelisted snapshot of a deletion review and its two fingerprints, as second-mode setup has
// them (connectionSetup/setupSnapshot.ts): `snapshot.fingerprint` binds what the deletion
// removes (the Integration as reviewed and the connections that go with their revisions); the
// review's `fingerprint`, which the confirmation presents, binds the review itself (its id,
// action and expiry), so two previews of one state are confirmed apart. The snapshot is built for
// the preview and again under the locks of the confirmation: equal fingerprints mean nothing the
// preview bound has changed. Traffic is not bound (a deleted connection's observations and
// incidents become unreadable whatever arrived since); configuration is, through the revisions.

import { fingerprint } from '../../shared/fingerprint.js';
import type { CredentialStatus, Direction, Mode, Protocol } from '../connections/connectionStore.js';
import type { DeletionConnection, DeletionIntegration } from './deletionStore.js';

export type DeletionAction = 'integration.delete' | 'connection.delete';

export interface DeletionSnapshot {
  /** What is deleted: the whole Integration (`connectionId` null) or one of its connections. */
  target: { workspaceIntegrationId: string; connectionId: string | null };
  /**
   * The shared Integration as reviewed. Its revision moves when it gains (setup) or loses
   * (deletion) a connection, so a review of either target is stale after such a change.
   */
  integration: { id: string; name: string; provider: string; direction: Direction; protocol: Protocol; revision: string };
  /**
   * The connections the deletion removes, in id order: all live ones for an Integration, the
   * target for a connection. A connection's revision moves with any configuration change
   * (credentials, contracts, rules, copies).
   */
  connections: { connectionId: string; mode: Mode; environmentId: string; revision: string; credentialStatus: CredentialStatus }[];
  /** Over every other member. */
  fingerprint: string;
}

/**
 * What a deleted connection's reads lose, as it stood at the preview: shown to the reviewer, not
 * bound by the fingerprint (traffic keeps arriving until the deletion commits).
 */
export interface DeletionEvidence {
  connectionId: string;
  latestObservationAt: string | null;
  openIncidentCount: number;
  contractVersions: number;
  rules: number;
}

export function buildDeletionSnapshot(input: {
  integration: DeletionIntegration;
  connectionId: string | null;
  connections: readonly DeletionConnection[];
}): DeletionSnapshot {
  const { integration } = input;
  const body = {
    target: { workspaceIntegrationId: integration.id, connectionId: input.connectionId },
    integration: {
      id: integration.id,
      name: integration.name,
      provider: integration.provider,
      direction: integration.direction,
      protocol: integration.protocol,
      revision: integration.revision,
    },
    connections: input.connections
      .filter((connection) => input.connectionId === null || connection.id === input.connectionId)
      .map((connection) => ({
        connectionId: connection.id,
        mode: connection.mode,
        environmentId: connection.environmentId,
        revision: connection.revision,
        credentialStatus: connection.credentialStatus,
      })),
  };
  return { ...body, fingerprint: fingerprint(body) };
}

/** The fingerprint a client presents to confirm this review (00-decisions §4 JCS fingerprint). */
export function confirmationFingerprint(input: {
  operationId: string;
  action: DeletionAction;
  expiresAt: string;
  snapshot: DeletionSnapshot;
}): string {
  return fingerprint({
    operationId: input.operationId,
    action: input.action,
    expiresAt: input.expiresAt,
    snapshotFingerprint: input.snapshot.fingerprint,
  });
}
