// 02 "Review snapshot" and the two fingerprints of a review: the configuration fingerprint binds
// the exact snapshot, the approval fingerprint binds the whole review (its id, action, expiry,
// original operation, mappings and snapshot), so two reviews of one snapshot are approved apart.

import { fingerprint } from '../../shared/fingerprint.js';
import type { ConnectionRecord, Direction, Mode, Protocol } from '../connections/connectionStore.js';
import type { CopiedArtifacts, SnapshotParts } from './artifacts.js';
import type { ConfigurationAction, IntegrationIdentityRow } from './configurationStore.js';

/** 02 `proof.schema` of every completed receipt. */
export const PROOF_SCHEMA = 'service.configuration-operation/1';

/** 02 Operation receipt `proof`: the approved review's fingerprint and the configuration it applied. */
export interface Proof {
  schema: typeof PROOF_SCHEMA;
  approvalFingerprint: string;
  configurationFingerprint: string;
}

/** The proof of an applied review (copy, compensation or setup). */
export function proofOf(review: { fingerprint: string; snapshot: { fingerprint: string } }): Proof {
  return { schema: PROOF_SCHEMA, approvalFingerprint: review.fingerprint, configurationFingerprint: review.snapshot.fingerprint };
}

export interface ReviewSnapshot extends SnapshotParts {
  identity: { id: string; revision: string; tenantId: string; name: string; provider: string; direction: Direction; protocol: Protocol };
  source: { connectionId: string; environmentId: string; revision: string };
  destination: { mode: Mode; environmentId: string; connectionId: string; revision: string };
  /** The configuration fingerprint: over every other member. */
  fingerprint: string;
}

export interface SnapshotInput {
  identity: IntegrationIdentityRow;
  tenantId: string;
  source: ReviewSnapshot['source'];
  destination: ConnectionRecord;
  parts: SnapshotParts;
}

export function buildSnapshot(input: SnapshotInput): ReviewSnapshot {
  const { identity, destination } = input;
  const body = {
    identity: {
      id: identity.id,
      revision: identity.revision,
      tenantId: input.tenantId,
      name: identity.name,
      provider: identity.provider,
      direction: identity.direction,
      protocol: identity.protocol,
    },
    source: input.source,
    destination: {
      mode: destination.mode,
      environmentId: destination.environmentId,
      connectionId: destination.id,
      revision: destination.revision,
    },
    contracts: input.parts.contracts,
    rules: input.parts.rules,
  };
  return { ...body, fingerprint: fingerprint(body) };
}

export interface ApprovalInput {
  operationId: string;
  action: ConfigurationAction;
  expiresAt: string;
  originalOperationId: string | null;
  copiedArtifacts: CopiedArtifacts | null;
  snapshot: ReviewSnapshot;
}

/** The approval fingerprint a client presents to apply this review. */
export function approvalFingerprint(input: ApprovalInput): string {
  return fingerprint({
    operationId: input.operationId,
    action: input.action,
    expiresAt: input.expiresAt,
    originalOperationId: input.originalOperationId,
    copiedArtifacts: input.copiedArtifacts,
    configurationFingerprint: input.snapshot.fingerprint,
  });
}
