// The whitelisted snapshot of a second-mode setup review (02 "Review snapshot": "the setup-preview
// snapshot is a whitelist of the same kind") and the review's two fingerprints, as configuration
// copy has them (configuration/snapshot.ts): the configuration fingerprint (`snapshot.fingerprint`)
// binds the exact snapshot; the approval fingerprint binds the review (its id, action and expiry),
// so two reviews of one state are approved apart. The snapshot is built for the preview and again
// inside the apply transaction: equal configuration fingerprints mean that the identity, the
// source revision, the destination environment and the selected artifacts are what was reviewed.

import type { Queryable } from '../../shared/db/pool.js';
import { fingerprint } from '../../shared/fingerprint.js';
import type { ConnectionRecord, Direction, Mode, Protocol } from '../connections/connectionStore.js';
import { selectArtifacts, type SnapshotContract, type SnapshotRule } from '../configuration/artifacts.js';
import type { SetupIntegration } from './setupStore.js';

export interface SetupSnapshot {
  /** The shared Integration as reviewed. */
  identity: { id: string; revision: string; tenantId: string; name: string; provider: string; direction: Direction; protocol: Protocol };
  /** The other mode's connection the artifacts come from, or null for an empty setup without a source. */
  source: { connectionId: string; environmentId: string; revision: string } | null;
  /** The slot to fill: its mode and the workspace environment bound to that mode. */
  destination: { mode: Mode; environmentId: string };
  contracts: SnapshotContract[];
  rules: SnapshotRule[];
  /** The configuration fingerprint: over every other member. */
  fingerprint: string;
}

export interface SnapshotInput {
  tenantId: string;
  workspaceId: string;
  integration: SetupIntegration;
  source: ConnectionRecord | null;
  destination: { mode: Mode; environmentId: string };
  contractVersionIds: readonly string[];
  ruleIds: readonly string[];
}

/**
 * Builds the snapshot. The selection is validated against the source by the shared artifact
 * selection of configuration copy (400 `configuration_selection_invalid`); without a source the
 * selection is empty (the route's schema requires a source for any selection).
 */
export async function buildSetupSnapshot(db: Queryable, input: SnapshotInput): Promise<SetupSnapshot> {
  const { integration, source } = input;
  const parts = source
    ? await selectArtifacts(db, {
        workspaceId: input.workspaceId,
        sourceConnection: source,
        contractVersionIds: input.contractVersionIds,
        ruleIds: input.ruleIds,
      })
    : { contracts: [], rules: [] };
  const body = {
    identity: {
      id: integration.id,
      revision: integration.revision,
      tenantId: input.tenantId,
      name: integration.name,
      provider: integration.provider,
      direction: integration.direction,
      protocol: integration.protocol,
    },
    source: source ? { connectionId: source.id, environmentId: source.environmentId, revision: source.revision } : null,
    destination: input.destination,
    contracts: parts.contracts,
    rules: parts.rules,
  };
  return { ...body, fingerprint: fingerprint(body) };
}

/** The fingerprint a client presents to apply this review (00-decisions §4 JCS fingerprint). */
export function approvalFingerprint(input: { operationId: string; action: string; expiresAt: string; snapshot: SetupSnapshot }): string {
  return fingerprint({
    operationId: input.operationId,
    action: input.action,
    expiresAt: input.expiresAt,
    configurationFingerprint: input.snapshot.fingerprint,
  });
}
