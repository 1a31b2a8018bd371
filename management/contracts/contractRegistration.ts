import type pg from 'pg';
import type { SkippedPayload } from '../../shared/contracts/index.js';
import { nextRevision } from '../../shared/db/revision.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import type { ContractCaller } from './contractConnection.js';
import type { ConnectionRecord, Direction, Protocol } from '../connections/connectionStore.js';
import type { AppDeps } from '../deps.js';
import { auditActorOf, recordAudit } from '../operations/audit.js';
import { requireCanonicalWorkspace } from '../workspaces/rules.js';
import { loadContractConnection, recheckContractAuthority } from './contractConnection.js';
import {
  DECLARED_VERSION_CONSTRAINT,
  findVersionByDeclaredVersion,
  insertDraftVersion,
  setConnectionRevision,
  type ContractFormat,
  type ContractVersionRecord,
} from './contractStore.js';
import type { ImportedContract } from './contractImport.js';
import { registrationForm, type RegistrationForm } from './contractViews.js';

/** The body of POST /v1/integrations/{integrationId}/contracts, after schema validation. */
export interface RegistrationInput {
  declaredVersion: string;
  format: ContractFormat;
  document: Record<string, unknown>;
  operation?: Record<string, string>;
  expectedScope?: { direction: Direction; protocol: Protocol };
  expectedConnectionRevision?: string;
}

/** 201 body: the registration form, what the import left out, and the committed connection revision. */
export interface RegistrationResult {
  contract: RegistrationForm;
  skipped: SkippedPayload[];
  connectionRevision: string;
}

/** 01 Register `expectedScope`: the target's direction and protocol, checked before anything is written. */
function checkExpectedScope(connection: ConnectionRecord, expected: RegistrationInput['expectedScope']): void {
  if (expected && (expected.direction !== connection.direction || expected.protocol !== connection.protocol)) {
    throw new AppError('integration_scope_mismatch');
  }
}

function resultOf(version: ContractVersionRecord): RegistrationResult {
  return { contract: registrationForm(version), skipped: version.skipped, connectionRevision: version.connectionRevision };
}

/**
 * An identical draft retry (01 lifecycle table, row 2) answers the original registration: same
 * draft, its `skipped`, and the connection revision it committed. A retry of a request that
 * carried `expectedConnectionRevision` still carries the revision the draft was registered from,
 * so that expectation (or the current revision) is accepted for it; no write happens either way.
 */
function isIdenticalRetry(
  existing: ContractVersionRecord,
  imported: ImportedContract,
  connection: ConnectionRecord,
  expected: string | undefined,
): boolean {
  if (existing.lifecycleStatus !== 'draft' || existing.contentSignature !== imported.contentSignature) return false;
  return expected === undefined || expected === connection.revision || expected === existing.registeredFromRevision;
}

async function registerLocked(
  deps: AppDeps,
  db: pg.PoolClient,
  principal: ContractCaller,
  integrationId: string,
  input: RegistrationInput,
  imported: ImportedContract,
): Promise<RegistrationResult> {
  const connection = await loadContractConnection(db, principal, integrationId, { forUpdate: true });
  await recheckContractAuthority(db, principal, 'contracts:write', deps.clock.nowMs());
  checkExpectedScope(connection, input.expectedScope);
  const existing = await findVersionByDeclaredVersion(db, connection.id, input.declaredVersion);
  if (existing && isIdenticalRetry(existing, imported, connection, input.expectedConnectionRevision)) return resultOf(existing);
  if (input.expectedConnectionRevision !== undefined && input.expectedConnectionRevision !== connection.revision) {
    throw new AppError('connection_configuration_changed');
  }
  // 01: an active or superseded version is never an identical retry; a changed document, format,
  // selector or schema under the same label is a conflict.
  if (existing) throw new AppError('contract_version_already_exists');

  const now = deps.clock.now();
  const revision = await nextRevision(db);
  const version = await insertDraftVersion(db, {
    connectionId: connection.id,
    workspaceId: principal.workspaceId,
    declaredVersion: input.declaredVersion,
    format: input.format,
    importedFrom: imported.importedFrom,
    fingerprint: imported.fingerprint,
    document: input.document,
    contentSignature: imported.contentSignature,
    skipped: imported.skipped,
    operations: imported.operations,
    direction: connection.direction,
    protocol: connection.protocol,
    registeredFromRevision: connection.revision,
    connectionRevision: revision,
    apiKeyId: principal.kind === 'api_key' ? principal.keyId : null,
    now,
  });
  await setConnectionRevision(db, connection.id, revision);
  await recordAudit(db, {
    workspaceId: principal.workspaceId,
    ...auditActorOf(principal),
    action: 'contract.register',
    targetId: version.id,
    metadata: {
      connectionId: connection.id,
      declaredVersion: version.declaredVersion,
      format: version.format,
      fingerprint: version.fingerprint,
      operationCount: version.operationCount,
      connectionRevision: revision,
    },
    at: now,
  });
  return resultOf(version);
}

/**
 * POST /v1/integrations/{integrationId}/contracts (01 Register). The import runs first, on the
 * import pool's worker thread; then, in one transaction under the connection row lock: the
 * `expectedConnectionRevision` check, the declared-version rules, the draft with its operations, a
 * new connection revision and the audit row. No analysis is enqueued and the active version does
 * not change.
 */
export async function registerContract(
  deps: AppDeps,
  principal: ContractCaller,
  integrationId: string,
  input: RegistrationInput,
): Promise<RegistrationResult> {
  requireCanonicalWorkspace(principal);
  const connection = await loadContractConnection(deps.pool, principal, integrationId);
  checkExpectedScope(connection, input.expectedScope);
  const imported = await deps.imports.run(input, connection.protocol);
  try {
    return await withTransaction(deps.pool, (db) => registerLocked(deps, db, principal, integrationId, input, imported));
  } catch (error) {
    // The row lock serialises registrations of one connection, so a duplicate label cannot race
    // in; should one ever do, a second pass answers it as a retry or a conflict.
    if (!isUniqueViolation(error, DECLARED_VERSION_CONSTRAINT)) throw error;
    try {
      return await withTransaction(deps.pool, (db) => registerLocked(deps, db, principal, integrationId, input, imported));
    } catch (again) {
      if (isUniqueViolation(again, DECLARED_VERSION_CONSTRAINT)) throw new AppError('contract_version_already_exists');
      throw again;
    }
  }
}
