// 02 "Compensation": a completed copy can be reversed only while the destination is exactly as the
// copy left it and the copied artifacts are pristine.

import type { Queryable } from '../../shared/db/pool.js';
import { AppError } from '../../shared/errors/index.js';
import type { ConnectionRecord } from '../connections/connectionStore.js';
import type { StoredOperation } from '../operations/idempotency.js';
import { countPristine, hasIncidentReferences } from './artifactStore.js';
import type { CopiedArtifacts } from './artifacts.js';
import type { ReviewRecord } from './configurationStore.js';

/** A copy review and its completed operation. */
export interface CompletedCopy {
  review: ReviewRecord;
  completion: StoredOperation;
}

export function copiedArtifactsOf(completion: StoredOperation): CopiedArtifacts {
  return completion.receipt.copiedArtifacts as CopiedArtifacts;
}

/**
 * Throws 409 `configuration_compensation_unavailable` unless the copy can be reversed now: the
 * destination still exists with the revision and credential epoch the copy committed (any later
 * change moves one of them: a credential rotation, a rule enabled then disabled, an activation,
 * a registration), every copied draft is still a never-activated draft, every copied rule still
 * disabled with its copied definition, and no incident names a copied version or rule. Returns
 * the mappings of what a compensation removes.
 */
export async function assertCompensable(
  db: Queryable,
  copy: CompletedCopy,
  destination: ConnectionRecord | null,
): Promise<CopiedArtifacts> {
  const unavailable = () => new AppError('configuration_compensation_unavailable');
  if (!destination || destination.deletedAt !== null) throw unavailable();
  if (destination.revision !== copy.completion.recorded_revision || destination.credentialEpoch !== copy.review.destinationCredentialEpoch)
    throw unavailable();
  const copied = copiedArtifactsOf(copy.completion);
  const versionIds = copied.contracts.map((c) => c.destinationContractVersionId);
  const definitions = new Map(copy.review.snapshot.rules.map((rule) => [rule.sourceRuleId, rule]));
  const rules = copied.rules.map((mapping) => ({ ...definitions.get(mapping.sourceRuleId)!, id: mapping.destinationRuleId }));
  const pristine = await countPristine(db, destination.id, versionIds, rules);
  if (pristine.drafts !== versionIds.length || pristine.rules !== rules.length) throw unavailable();
  if (
    await hasIncidentReferences(
      db,
      destination.id,
      versionIds,
      rules.map((rule) => rule.id),
    )
  )
    throw unavailable();
  return copied;
}
