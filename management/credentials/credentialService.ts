import type pg from 'pg';
import { nextRevision } from '../../shared/db/revision.js';
import { AppError } from '../../shared/errors/index.js';
import { hasIdForm, newId } from '../../shared/ids.js';
import { bumpCredentialEpoch } from '../../shared/redis.js';
import { constantTimeEqual, sha256Hex } from '../../shared/secrets.js';
import type { ApiKeyPrincipal, OperationActor } from '../auth/principal.js';
import type { Deps } from '../deps.js';
import { readOwnOperation, runOperation, type OperationResponse, type StoredOperation } from '../operations/idempotency.js';
import type { ConnectionRecord, CredentialStatus } from '../connections/connectionStore.js';
import { isHistoricalReceipt, loadWorkspaceConnection } from '../connections/workspaceConnection.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import {
  endActiveCredential,
  findActiveTokenHash,
  insertActiveCredential,
  readCredentialState,
  recordCredentialChange,
  type CredentialState,
} from './credentialStore.js';

export type CredentialAction = 'issue' | 'rotate' | 'revoke';

export const CREDENTIAL_OPERATION_KINDS: Record<CredentialAction, string> = {
  issue: 'credential.issue',
  rotate: 'credential.rotate',
  revoke: 'credential.revoke',
};

/** Only a runtime `int_` id names a connection; a `wint_` or malformed id is simply not found. */
function requireConnectionId(connectionId: string): void {
  if (!hasIdForm(connectionId, 'int_')) throw new AppError('connection_not_found');
}

function loadConnection(
  db: pg.Pool | pg.PoolClient,
  principal: Pick<OperationActor, 'workspaceId'>,
  connectionId: string,
  forUpdate = false,
): Promise<ConnectionRecord> {
  return loadWorkspaceConnection(db, principal.workspaceId, connectionId, { forUpdate });
}

export async function readCredentialStatus(deps: Deps, principal: ApiKeyPrincipal, connectionId: string): Promise<CredentialState> {
  requireCanonicalWorkspace(principal);
  requireConnectionId(connectionId);
  return readCredentialState(deps.pool, await loadConnection(deps.pool, principal, connectionId));
}

/** What an action does to the current status (01 Credential status table). */
interface Transition {
  status: CredentialStatus;
  end?: 'rotated' | 'revoked';
  issue: boolean;
}

function planTransition(action: CredentialAction, status: CredentialStatus): Transition | 'unchanged' {
  switch (action) {
    case 'issue':
      if (status === 'active') throw new AppError('credential_already_issued');
      // not_issued → active; revoked → active is a re-issue (spec: "not shown", docs/decisions/integrations.md).
      return { status: 'active', issue: true };
    case 'rotate':
      // Rotation needs an active credential; a revoked one is re-issued, not rotated.
      if (status !== 'active') throw new AppError('credential_not_issued');
      return { status: 'active', end: 'rotated', issue: true };
    case 'revoke':
      if (status !== 'active') return 'unchanged';
      return { status: 'revoked', end: 'revoked', issue: false };
  }
}

/**
 * The replay shape of a stored receipt. `historical` is computed now: the connection was deleted
 * or no longer has the receipt's recorded revision. The token is never in a receipt, so issue and
 * rotate replays say that it cannot be recovered.
 */
export async function credentialReceiptReplay(
  db: pg.Pool | pg.PoolClient,
  principal: Pick<OperationActor, 'workspaceId'>,
  stored: StoredOperation,
): Promise<Record<string, unknown>> {
  return {
    ...stored.receipt,
    replayed: true,
    historical: await isHistoricalReceipt(db, principal.workspaceId, stored),
    credentialRecoveryRequired: stored.receipt.action !== 'revoke',
  };
}

export interface CredentialActionInput {
  action: CredentialAction;
  connectionId: string;
  expectedRevision: string;
  idempotencyKey: string;
}

/**
 * Issue, rotate or revoke under the one idempotency mechanism, for a workspace API key or, through
 * the console's session route, the signed-in owner or admin (consoleCredentialMutation.ts): the connection row is locked, the
 * reviewed revision must still be current, the change takes a new revision and credential epoch,
 * and the receipt and audit commit with it. The ingest edge's epoch is bumped before COMMIT and
 * again after it (shared/redis.ts explains why both).
 */
export async function performCredentialAction(
  deps: Deps,
  principal: OperationActor,
  input: CredentialActionInput,
): Promise<OperationResponse> {
  requireCanonicalWorkspace(principal);
  requireConnectionId(input.connectionId);
  let changedConnectionId: string | null = null;

  const result = await runOperation(
    deps,
    {
      kind: CREDENTIAL_OPERATION_KINDS[input.action],
      principal,
      scope: 'integrations:manage',
      idempotencyKey: input.idempotencyKey,
      request: { connectionId: input.connectionId, body: { expectedRevision: input.expectedRevision } },
      epochChangedCode: 'connection_configuration_changed',
      replay: (stored, db) => credentialReceiptReplay(db, principal, stored),
      beforeCommit: async () => {
        if (changedConnectionId) await bumpCredentialEpoch(deps.redis, principal.accountId, changedConnectionId);
      },
    },
    async (db) => {
      changedConnectionId = null;
      let connection = await loadConnection(db, principal, input.connectionId, true);
      if (connection.revision !== input.expectedRevision) throw new AppError('connection_configuration_changed');
      const transition = planTransition(input.action, connection.credentialStatus);
      const now = deps.clock.now();
      let ingestToken: string | undefined;

      if (transition !== 'unchanged') {
        const revision = await nextRevision(db);
        const epoch = connection.credentialEpoch + 1;
        if (transition.end) await endActiveCredential(db, { connectionId: connection.id, status: transition.end, now });
        if (transition.issue) {
          ingestToken = (
            await insertActiveCredential(db, { connectionId: connection.id, epoch, encryptionKey: deps.config.secretEncryptionKey, now })
          ).ingestToken;
        }
        await recordCredentialChange(db, { connectionId: connection.id, revision, epoch, status: transition.status });
        connection = { ...connection, revision, credentialEpoch: epoch, credentialStatus: transition.status };
        changedConnectionId = connection.id;
      }

      const operationId = newId('credop_');
      const credential = await readCredentialState(db, connection);
      // The stored receipt: evidence of the operation, never the token (01 Credential operation receipt).
      const receipt = { operationId, action: input.action, credential, connectionKey: connection.connectionKey };
      const response: Record<string, unknown> = { ...receipt, replayed: false, historical: false, credentialRecoveryRequired: false };
      if (ingestToken !== undefined) response.ingestToken = ingestToken;
      return {
        operationId,
        statusCode: 201,
        response,
        receipt,
        integrationId: connection.integrationId,
        connectionId: connection.id,
        recordedRevision: connection.revision,
        audit: {
          action: CREDENTIAL_OPERATION_KINDS[input.action],
          targetId: connection.id,
          metadata: {
            mode: connection.mode,
            revision: connection.revision,
            status: connection.credentialStatus,
            changed: transition !== 'unchanged',
          },
        },
      };
    },
  );

  if (result.statusCode === 201 && changedConnectionId) {
    // Committed already; the pre-commit bump covers the change, this one only beats a racing reload.
    await bumpCredentialEpoch(deps.redis, principal.accountId, changedConnectionId).catch(() => undefined);
  }
  return result;
}

/** GET /v1/credential-operations/{id}: the receipt for the key that performed it, never a token. */
export async function readCredentialOperation(
  deps: Deps,
  principal: ApiKeyPrincipal,
  operationId: string,
): Promise<Record<string, unknown>> {
  requireCanonicalWorkspace(principal);
  if (!hasIdForm(operationId, 'credop_')) throw new AppError('operation_not_found');
  const stored = await readOwnOperation(deps, principal, operationId, Object.values(CREDENTIAL_OPERATION_KINDS));
  return credentialReceiptReplay(deps.pool, principal, stored);
}

/**
 * Verify: the connection key must be this connection's and the token must match its active
 * credential (constant-time hash comparison, 00-decisions §4). Writes nothing.
 */
export async function verifyCredential(
  deps: Deps,
  principal: ApiKeyPrincipal,
  connectionId: string,
  body: { connectionKey: string; ingestToken: string },
): Promise<CredentialState> {
  requireCanonicalWorkspace(principal);
  requireConnectionId(connectionId);
  const connection = await loadConnection(deps.pool, principal, connectionId);
  const activeHash = connection.credentialStatus === 'active' ? await findActiveTokenHash(deps.pool, connection.id) : null;
  const keyMatches = constantTimeEqual(body.connectionKey, connection.connectionKey);
  const tokenMatches = constantTimeEqual(sha256Hex(body.ingestToken), activeHash ?? '');
  if (!keyMatches || !tokenMatches || activeHash === null) throw new AppError('credential_verification_failed');
  return readCredentialState(deps.pool, connection);
}
