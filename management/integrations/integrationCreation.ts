import { nextRevision } from '../../shared/db/revision.js';
import { AppError } from '../../shared/errors/index.js';
import { newId } from '../../shared/ids.js';
import { bumpCredentialEpoch } from '../../shared/redis.js';
import type { OperationActor } from '../auth/principal.js';
import { insertConnection, type Direction, type Mode, type Protocol } from '../connections/connectionStore.js';
import { insertActiveCredential } from '../credentials/credentialStore.js';
import type { Deps } from '../deps.js';
import { requireModeTopology } from '../environments/environmentStore.js';
import { runOperation, type OperationResponse, type StoredOperation } from '../operations/idempotency.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import { insertIntegration } from './integrationStore.js';

export const INTEGRATION_CREATE_KIND = 'integration.create';

/** 01 Create an Integration: the normalised body (name and provider trimmed). */
export interface IntegrationCreationInput {
  mode: Mode;
  name: string;
  provider: string;
  direction: Direction;
  protocol: Protocol;
}

/** The stored, credential-free receipt of a creation (01: receipts never hold an ingest token). */
interface CreationReceipt {
  operationId: string;
  integration: { id: string; connectionId: string; mode: Mode; environmentId: string };
  collectorConfiguration: { integrationKey: string; connectionKey: string };
}

/** 01: name and provider are trimmed and then 1 to 120 characters. */
export function trimmedText(value: string): string {
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > 120) throw new AppError('invalid_integration');
  return trimmed;
}

/**
 * The credential-free replay shape (01: identical retry and receipt read): the original
 * operation, Integration and connection key, never the token, and `credentialRecoveryRequired`
 * true because the token cannot be recovered from the receipt.
 */
export function creationReplayBody(stored: StoredOperation): Record<string, unknown> {
  const receipt = stored.receipt as unknown as CreationReceipt;
  return {
    operationId: receipt.operationId,
    replayed: true,
    credentialRecoveryRequired: true,
    integration: receipt.integration,
    collectorConfiguration: receipt.collectorConfiguration,
  };
}

/**
 * POST /v1/integrations (01 "Create an Integration and its first connection"): the shared
 * workflow, its connection in the requested mode and that connection's first credential, with
 * the receipt and audit row, in one transaction of the one idempotency mechanism. The workspace
 * comes from the key only; legacy, incomplete or mixed topologies are refused.
 */
export async function createIntegration(
  deps: Deps,
  principal: OperationActor,
  idempotencyKey: string,
  input: IntegrationCreationInput,
): Promise<OperationResponse> {
  requireCanonicalWorkspace(principal);
  const result = await runOperation(
    deps,
    {
      kind: INTEGRATION_CREATE_KIND,
      principal,
      scope: 'integrations:manage',
      idempotencyKey,
      request: { route: 'POST /v1/integrations', body: input },
      epochChangedCode: 'workspace_authorization_changed',
      replay: creationReplayBody,
      beforeCommit: async (outcome) => {
        await bumpCredentialEpoch(deps.redis, principal.accountId, outcome.connectionId!);
      },
    },
    async (db) => {
      const topology = await requireModeTopology(db, principal.workspaceId);
      const environment = topology[input.mode];
      const now = deps.clock.now();
      const operationId = newId('intop_');
      const integration = await insertIntegration(db, {
        workspaceId: principal.workspaceId,
        name: input.name,
        provider: input.provider,
        direction: input.direction,
        protocol: input.protocol,
        revision: await nextRevision(db),
        now,
      });
      const connectionRevision = await nextRevision(db);
      const connection = await insertConnection(db, {
        integrationId: integration.id,
        workspaceId: principal.workspaceId,
        environmentId: environment.id,
        mode: input.mode,
        revision: connectionRevision,
        credentialStatus: 'active',
        credentialEpoch: 1,
        now,
      });
      const { ingestToken } = await insertActiveCredential(db, {
        connectionId: connection.id,
        epoch: 1,
        encryptionKey: deps.config.secretEncryptionKey,
        now,
      });
      const receipt: CreationReceipt = {
        operationId,
        integration: { id: integration.id, connectionId: connection.id, mode: input.mode, environmentId: environment.id },
        collectorConfiguration: { integrationKey: integration.integrationKey, connectionKey: connection.connectionKey },
      };
      return {
        operationId,
        statusCode: 201,
        response: {
          ...receipt,
          replayed: false,
          credentialRecoveryRequired: false,
          collectorConfiguration: { ...receipt.collectorConfiguration, ingestToken },
        },
        receipt: receipt as unknown as Record<string, unknown>,
        integrationId: integration.id,
        connectionId: connection.id,
        recordedRevision: connectionRevision,
        audit: {
          action: 'integration.create',
          targetId: integration.id,
          metadata: {
            connectionId: connection.id,
            mode: input.mode,
            environmentId: environment.id,
            connectionRevision,
          },
        },
      };
    },
  );
  if (result.statusCode === 201) {
    // Second bump after COMMIT: a credential load that raced the commit is invalidated too. The
    // creation is committed and its token exists only in this response, so a Redis failure here
    // must not turn it into an error (the bump before COMMIT already moved the epoch).
    const connectionId = (result.body.integration as { connectionId: string }).connectionId;
    await bumpCredentialEpoch(deps.redis, principal.accountId, connectionId).catch(() => undefined);
  }
  return result;
}
