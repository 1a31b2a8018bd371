import type pg from 'pg';
import { importJsonSchema, importOpenApi, type ImportedOperation, type SkippedPayload } from '../../shared/contracts/index.js';
import { invalidContract } from '../../shared/contracts/invalidContract.js';
import { nextRevision } from '../../shared/db/revision.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { withTransaction } from '../../shared/db/transaction.js';
import { AppError } from '../../shared/errors/index.js';
import { fingerprint } from '../../shared/fingerprint.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import type { ConnectionRecord, Direction, Protocol } from '../connections/connectionStore.js';
import type { Deps } from '../deps.js';
import { recordAudit } from '../operations/audit.js';
import { loadContractConnection, recheckContractAuthority, requireCanonicalWorkspace } from './contractConnection.js';
import {
  DECLARED_VERSION_CONSTRAINT,
  findVersionByDeclaredVersion,
  insertDraftVersion,
  setConnectionRevision,
  type ContractFormat,
  type ContractVersionRecord,
} from './contractStore.js';
import { registrationForm, type RegistrationForm } from './contractViews.js';
import { findUnstorableJson } from './storableJson.js';

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

interface ImportedContract {
  importedFrom: string;
  fingerprint: string;
  operations: ImportedOperation[];
  skipped: SkippedPayload[];
  contentSignature: string;
}

/** 01 Register `expectedScope`: the target's direction and protocol, checked before anything is written. */
function checkExpectedScope(connection: ConnectionRecord, expected: RegistrationInput['expectedScope']): void {
  if (expected && (expected.direction !== connection.direction || expected.protocol !== connection.protocol)) {
    throw new AppError('integration_scope_mismatch');
  }
}

/**
 * Runs the import (pure CPU, before any transaction) under 01 "Import rules": OpenAPI for
 * `http-api` and `http-webhook` only; an operation-bound JSON Schema for every protocol (the
 * selector is checked against the protocol's methods and payload locations).
 */
function importContract(input: RegistrationInput, protocol: Protocol): ImportedContract {
  // The other members were checked with every body (management/plugins/storableStrings.ts); the
  // open document is left to this check, which answers with a pointer into it.
  const unstorable = findUnstorableJson(input.document);
  if (unstorable) throw invalidContract(`the document cannot be kept as evidence: ${unstorable.reason}`, [unstorable.pointer]);
  let operations: ImportedOperation[];
  let skipped: SkippedPayload[];
  let importedFrom: string;
  if (input.format === 'openapi') {
    if (input.operation !== undefined) {
      throw invalidContract('operation is accepted only with format json-schema; OpenAPI operations come from the document', []);
    }
    if (protocol !== 'http-api' && protocol !== 'http-webhook') {
      throw invalidContract(`OpenAPI documents can be registered only for http-api and http-webhook Integrations; a ${protocol} Integration uses format json-schema with an operation selector`, []);
    }
    const result = importOpenApi(input.document, protocol);
    ({ operations, skipped } = result);
    importedFrom = result.openapiVersion === '2.0' ? 'swagger-2.0' : result.openapiVersion.startsWith('3.1') ? 'openapi-3.1' : 'openapi-3.0';
  } else {
    operations = [importJsonSchema(input.document, input.operation, protocol)];
    skipped = [];
    importedFrom = 'json-schema';
  }
  const documentFingerprint = fingerprint(input.document);
  const selector = input.format === 'json-schema'
    ? { method: operations[0].method, routeTemplate: operations[0].routeTemplate, payloadLocation: operations[0].payloadLocation, statusSelector: operations[0].statusSelector }
    : null;
  // 01 lifecycle table: same document fingerprint, format, operation count, every operation
  // selector and schema fingerprint make an identical retry.
  const contentSignature = fingerprint({
    format: input.format,
    document: documentFingerprint,
    selector,
    operations: operations.map((operation) => ({ operationKey: operation.operationKey, fingerprint: operation.fingerprint })),
  });
  return { importedFrom, fingerprint: documentFingerprint, operations, skipped, contentSignature };
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
function isIdenticalRetry(existing: ContractVersionRecord, imported: ImportedContract, connection: ConnectionRecord, expected: string | undefined): boolean {
  if (existing.lifecycleStatus !== 'draft' || existing.contentSignature !== imported.contentSignature) return false;
  return expected === undefined || expected === connection.revision || expected === existing.registeredFromRevision;
}

async function registerLocked(deps: Deps, db: pg.PoolClient, principal: ApiKeyPrincipal, integrationId: string, input: RegistrationInput, imported: ImportedContract): Promise<RegistrationResult> {
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
    apiKeyId: principal.keyId,
    now,
  });
  await setConnectionRevision(db, connection.id, revision);
  await recordAudit(db, {
    workspaceId: principal.workspaceId,
    actorType: 'api_key',
    actorId: principal.keyId,
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
 * POST /v1/integrations/{integrationId}/contracts (01 Register). The import runs first; then, in
 * one transaction under the connection row lock: the `expectedConnectionRevision` check, the
 * declared-version rules, the draft with its operations, a new connection revision and the audit
 * row. No analysis is enqueued and the active version does not change.
 */
export async function registerContract(deps: Deps, principal: ApiKeyPrincipal, integrationId: string, input: RegistrationInput): Promise<RegistrationResult> {
  requireCanonicalWorkspace(principal);
  const connection = await loadContractConnection(deps.pool, principal, integrationId);
  checkExpectedScope(connection, input.expectedScope);
  const imported = importContract(input, connection.protocol);
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
