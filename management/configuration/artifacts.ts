// The artifacts that move between the two mode connections of one Integration (02 "Review
// snapshot"): selected contract versions become drafts and selected rules become disabled rules
// of the destination. Shared by configuration copy (this folder) and second-mode setup
// (management/connectionSetup/); both hold the transaction and the connection locks.

import type { ImportedOperation } from '../../shared/contracts/index.js';
import type { Queryable } from '../../shared/db/pool.js';
import { isUniqueViolation } from '../../shared/db/sqlstate.js';
import { AppError, type ErrorCode } from '../../shared/errors/index.js';
import { hasIdForm, newId, type IdPrefix } from '../../shared/ids.js';
import type { ConnectionRecord, Direction, Protocol } from '../connections/connectionStore.js';
import {
  DECLARED_VERSION_CONSTRAINT,
  insertDraftVersion,
  readOperations,
  type ContractOperationRecord,
} from '../contracts/contractStore.js';
import { insertRule } from '../rules/ruleStore.js';
import { countRules } from '../rules/ruleStore.js';
import { hasDeclaredVersion, hasRulePair, readRulesOf, readVersionsById, readVersionsOf } from './artifactStore.js';

/** 02 Limits: at most 100 identifiers in each selection array. */
export const MAX_SELECTION = 100;
/** 02 Limits: the whole snapshot fits in 1 MiB of serialised JSON. */
export const MAX_SNAPSHOT_BYTES = 1024 * 1024;

/**
 * One operation of a snapshot contract: everything the draft's operation row holds except its
 * id, direction and protocol (the destination's, which equal the source's within one Integration).
 */
export type SnapshotOperation = Omit<ContractOperationRecord, 'id' | 'contractVersionId' | 'direction' | 'protocol' | 'basePaths'> & {
  /** Absent from a review stored before issue 26 (its source then had none either). */
  basePaths?: string[];
};

/** 02 Review snapshot `contracts` entry: what the destination draft will be. */
export interface SnapshotContract {
  sourceContractVersionId: string;
  declaredVersion: string;
  /** The source version's content signature (document fingerprint, format, selector, operation fingerprints). */
  signature: string;
  /** Fingerprint of the imported document. */
  fingerprint: string;
  importedFrom: string;
  /** A copy always creates a draft, whatever the source version's status. */
  lifecycleStatus: 'draft';
  operations: SnapshotOperation[];
}

/** 02 Review snapshot `rules` entry: a rule definition, always disabled in the destination. */
export interface SnapshotRule {
  sourceRuleId: string;
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
  enabled: false;
}

/** The artifact part of a snapshot, in selection order. */
export interface SnapshotParts {
  contracts: SnapshotContract[];
  rules: SnapshotRule[];
}

/** 02 Operation receipt `copiedArtifacts`: source id → destination id of every created artifact. */
export interface CopiedArtifacts {
  contracts: { sourceContractVersionId: string; destinationContractVersionId: string }[];
  rules: { sourceRuleId: string; destinationRuleId: string }[];
}

export interface SelectionInput {
  /** The caller's workspace; the source connection was found in it. */
  workspaceId: string;
  /** The source connection, already found in `workspaceId` (its id is all that is read). */
  sourceConnection: Pick<ConnectionRecord, 'id'>;
  contractVersionIds: readonly string[];
  ruleIds: readonly string[];
}

function checkIds(ids: readonly string[], prefix: IdPrefix): void {
  if (ids.length > MAX_SELECTION || new Set(ids).size !== ids.length || !ids.every((id) => hasIdForm(id, prefix))) {
    throw new AppError('configuration_selection_invalid');
  }
}

/**
 * Validates a selection against the source connection and returns the whitelisted snapshot parts
 * (02 "Review snapshot"), in selection order. 400 `configuration_selection_invalid` for more than
 * 100 ids in an array, a duplicate, an id of the wrong form, or an id that is not the source's
 * (unknown, another connection's, another workspace's: all alike). An empty selection is valid
 * here (setup may start empty); copy requires at least one artifact itself.
 */
export async function selectArtifacts(db: Queryable, input: SelectionInput): Promise<SnapshotParts> {
  checkIds(input.contractVersionIds, 'cv_');
  checkIds(input.ruleIds, 'rule_');
  const sourceId = input.sourceConnection.id;
  const versions = new Map((await readVersionsOf(db, sourceId, input.contractVersionIds)).map((v) => [v.id, v]));
  const rules = new Map((await readRulesOf(db, sourceId, input.ruleIds)).map((r) => [r.id, r]));
  if (versions.size !== input.contractVersionIds.length || rules.size !== input.ruleIds.length) {
    throw new AppError('configuration_selection_invalid');
  }
  const operations = await readOperations(db, input.contractVersionIds);
  return {
    contracts: input.contractVersionIds.map((id) => {
      const version = versions.get(id)!;
      return {
        sourceContractVersionId: id,
        declaredVersion: version.declaredVersion,
        signature: version.contentSignature,
        fingerprint: version.fingerprint,
        importedFrom: version.importedFrom,
        lifecycleStatus: 'draft',
        operations: (operations.get(id) ?? []).map((op) => ({
          operationKey: op.operationKey,
          method: op.method,
          routeTemplate: op.routeTemplate,
          basePaths: op.basePaths,
          eventType: op.eventType,
          payloadLocation: op.payloadLocation,
          statusSelector: op.statusSelector,
          fingerprint: op.fingerprint,
          schema: op.schema,
          unchecked: op.unchecked,
        })),
      };
    }),
    rules: input.ruleIds.map((id) => {
      const rule = rules.get(id)!;
      return {
        sourceRuleId: id,
        sourceEventType: rule.sourceEventType,
        expectedObjectType: rule.expectedObjectType,
        maxDelayMs: rule.maxDelayMs,
        enabled: false,
      };
    }),
  };
}

/** 02 Limits: 409 `configuration_snapshot_too_large` when the serialised snapshot is over 1 MiB (UTF-8 bytes). */
export function assertSnapshotSize(snapshot: unknown): void {
  if (Buffer.byteLength(JSON.stringify(snapshot), 'utf8') > MAX_SNAPSHOT_BYTES) throw new AppError('configuration_snapshot_too_large');
}

/**
 * 409 `configuration_destination_conflict` when the destination already has a version with a
 * selected declared version (labels are unique per connection, 01 Versioning 2) or a rule with a
 * selected (event, object) pair (02 Reconciliation rule), or when the selected rules would take
 * it past its cap of rules (`rulesPerConnection`, docs/decisions/rules.md "Rule storage and mutations").
 */
export async function findDestinationConflicts(
  db: Queryable,
  destinationConnectionId: string,
  parts: SnapshotParts,
  rulesPerConnection: number,
): Promise<void> {
  if (
    (await hasDeclaredVersion(
      db,
      destinationConnectionId,
      parts.contracts.map((c) => c.declaredVersion),
    ))
    || (await hasRulePair(db, destinationConnectionId, parts.rules))
    || (parts.rules.length > 0 && (await countRules(db, destinationConnectionId)) + parts.rules.length > rulesPerConnection)
  ) {
    throw new AppError('configuration_destination_conflict');
  }
}

export interface CopyInput {
  workspaceId: string;
  /** The destination connection; it may have been inserted earlier in the same transaction (setup). */
  destination: { connectionId: string; direction: Direction; protocol: Protocol };
  parts: SnapshotParts;
  /** The destination revision this copy commits (the drafts' `connectionRevision`). */
  revision: string;
  /** The destination revision the copy started from; defaults to `revision` (a connection created by this transaction). */
  previousRevision?: string;
  /** The key that applies the copy, recorded on its drafts; null when a console user applies it. */
  apiKeyId: string | null;
  now: Date;
  /** Answered when a snapshot contract no longer matches its source version; 409 `configuration_preview_stale` by default. */
  staleCode?: ErrorCode;
}

/**
 * Creates the drafts and disabled rules of `parts` in the destination and returns the mappings.
 * A draft gets the source version's document, format, skipped list and content signature (read
 * in this transaction: versions are immutable) and the snapshot's operations, so it is the same
 * contract under the same declared version. Never copies credentials, baselines, observations or
 * incidents; never activates or enables. The caller sets the destination's revision, writes the
 * receipt and audit, and has already run `findDestinationConflicts` under the destination lock.
 */
export async function copyArtifacts(db: Queryable, input: CopyInput): Promise<CopiedArtifacts> {
  try {
    return await insertCopies(db, input);
  } catch (error) {
    // The unique label and pair indexes back findDestinationConflicts up.
    if (
      isUniqueViolation(error, DECLARED_VERSION_CONSTRAINT)
      || (error instanceof AppError && error.code === 'expected_outcome_already_exists')
    ) {
      throw new AppError('configuration_destination_conflict');
    }
    throw error;
  }
}

async function insertCopies(db: Queryable, input: CopyInput): Promise<CopiedArtifacts> {
  const sources = await readVersionsById(
    db,
    input.parts.contracts.map((c) => c.sourceContractVersionId),
  );
  const copied: CopiedArtifacts = { contracts: [], rules: [] };
  for (const contract of input.parts.contracts) {
    const source = sources.get(contract.sourceContractVersionId);
    if (!source || source.contentSignature !== contract.signature || source.fingerprint !== contract.fingerprint) {
      throw new AppError(input.staleCode ?? 'configuration_preview_stale');
    }
    const draft = await insertDraftVersion(db, {
      connectionId: input.destination.connectionId,
      workspaceId: input.workspaceId,
      declaredVersion: contract.declaredVersion,
      format: source.format,
      importedFrom: contract.importedFrom,
      fingerprint: contract.fingerprint,
      document: source.document,
      contentSignature: contract.signature,
      skipped: source.skipped,
      operations: contract.operations.map((op) => ({ ...op, basePaths: op.basePaths ?? [] })) as ImportedOperation[],
      direction: input.destination.direction,
      protocol: input.destination.protocol,
      registeredFromRevision: input.previousRevision ?? input.revision,
      connectionRevision: input.revision,
      apiKeyId: input.apiKeyId,
      now: input.now,
    });
    copied.contracts.push({ sourceContractVersionId: contract.sourceContractVersionId, destinationContractVersionId: draft.id });
  }
  for (const rule of input.parts.rules) {
    const created = await insertRule(db, {
      id: newId('rule_'),
      connectionId: input.destination.connectionId,
      workspaceId: input.workspaceId,
      definition: {
        sourceEventType: rule.sourceEventType,
        expectedObjectType: rule.expectedObjectType,
        maxDelayMs: rule.maxDelayMs,
        enabled: false,
      },
      now: input.now,
    });
    copied.rules.push({ sourceRuleId: rule.sourceRuleId, destinationRuleId: created.id });
  }
  return copied;
}
