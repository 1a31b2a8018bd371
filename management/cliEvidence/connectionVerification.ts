import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm } from '../../shared/ids.js';
import { findConnectionWithEvidence, type CredentialStatus, type Mode } from '../connections/connectionStore.js';
import { requirePathConnection } from '../connections/workspaceConnection.js';

/** 03 Connection verification: what stored evidence says of one connection; no traffic is sent. */
export interface ConnectionVerification {
  connectionId: string;
  mode: Mode;
  credentialStatus: 'active' | 'revoked' | 'missing';
  activeContractVersionId: string | null;
  hasObservations: boolean;
  latestObservedAt: string | null;
}

/** A connection whose credential was never issued has none: 03 calls that `missing`. */
const CREDENTIAL_STATUS: Record<CredentialStatus, ConnectionVerification['credentialStatus']> = {
  not_issued: 'missing',
  active: 'active',
  revoked: 'revoked',
};

/**
 * The verification of one live `int_` connection of the workspace, from the same row and
 * evidence the `/v1` connection read serves (credential status, active contract version, the
 * latest observation the analyzer recorded); an empty connection segment is 400
 * `connection_required`, anything else 404 `connection_not_found`.
 */
export async function verifyConnection(db: Queryable, workspaceId: string, connectionId: string): Promise<ConnectionVerification> {
  requirePathConnection(connectionId);
  const connection = hasIdForm(connectionId, 'int_') ? await findConnectionWithEvidence(db, workspaceId, connectionId) : null;
  if (!connection) throw new AppError('connection_not_found');
  return {
    connectionId: connection.id,
    mode: connection.mode,
    credentialStatus: CREDENTIAL_STATUS[connection.credentialStatus],
    activeContractVersionId: connection.activeContractVersionId,
    hasObservations: connection.latestObservationAt !== null,
    latestObservedAt: connection.latestObservationAt ? connection.latestObservationAt.toISOString() : null,
  };
}
