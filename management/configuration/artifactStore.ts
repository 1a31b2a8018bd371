// SQL of the copied artifacts (02 "Configuration copy and compensation"): the source versions and
// rules a selection names, the destination's conflicting labels and pairs, and the removal of a
// copy's pristine drafts and disabled rules.

import type { Queryable } from '../../shared/db/pool.js';
import type { SkippedPayload } from '../../shared/contracts/index.js';
import type { ContractFormat, LifecycleStatus } from '../contracts/contractStore.js';

/** A source contract version with what a copy needs to recreate it as a draft. */
export interface SourceVersionRow {
  id: string;
  declaredVersion: string;
  format: ContractFormat;
  importedFrom: string;
  fingerprint: string;
  contentSignature: string;
  document: unknown;
  skipped: SkippedPayload[];
  lifecycleStatus: LifecycleStatus;
}

interface VersionRow {
  id: string;
  declared_version: string;
  format: ContractFormat;
  imported_from: string;
  fingerprint: string;
  content_signature: string;
  document: unknown;
  skipped: SkippedPayload[];
  lifecycle_status: LifecycleStatus;
}

function toSourceVersion(row: VersionRow): SourceVersionRow {
  return {
    id: row.id,
    declaredVersion: row.declared_version,
    format: row.format,
    importedFrom: row.imported_from,
    fingerprint: row.fingerprint,
    contentSignature: row.content_signature,
    document: row.document,
    skipped: row.skipped,
    lifecycleStatus: row.lifecycle_status,
  };
}

/** The connection's versions among `ids` (others are simply absent), without their documents (`document` null). */
export async function readVersionsOf(db: Queryable, connectionId: string, ids: readonly string[]): Promise<SourceVersionRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<VersionRow>(
    `SELECT id, declared_version, format, imported_from, fingerprint, content_signature,
            NULL::jsonb AS document, skipped, lifecycle_status
       FROM contract_versions WHERE connection_id = $1 AND id = ANY($2::text[])`,
    [connectionId, ids],
  );
  return rows.map(toSourceVersion);
}

/** Source versions by id alone (a copy's apply: the snapshot names them), with their documents. */
export async function readVersionsById(db: Queryable, ids: readonly string[]): Promise<Map<string, SourceVersionRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<VersionRow>(
    `SELECT id, declared_version, format, imported_from, fingerprint, content_signature, document, skipped, lifecycle_status
       FROM contract_versions WHERE id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, toSourceVersion(row)]));
}

/** A source rule's definition. */
export interface SourceRuleRow {
  id: string;
  sourceEventType: string;
  expectedObjectType: string;
  maxDelayMs: number;
}

/** The connection's rules among `ids` (others are simply absent). */
export async function readRulesOf(db: Queryable, connectionId: string, ids: readonly string[]): Promise<SourceRuleRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; source_event_type: string; expected_object_type: string; max_delay_ms: number }>(
    `SELECT id, source_event_type, expected_object_type, max_delay_ms
       FROM reconciliation_rules WHERE connection_id = $1 AND id = ANY($2::text[])`,
    [connectionId, ids],
  );
  return rows.map((row) => ({
    id: row.id,
    sourceEventType: row.source_event_type,
    expectedObjectType: row.expected_object_type,
    maxDelayMs: row.max_delay_ms,
  }));
}

/** Whether the connection already has a version with one of these declared labels. */
export async function hasDeclaredVersion(db: Queryable, connectionId: string, declaredVersions: readonly string[]): Promise<boolean> {
  if (declaredVersions.length === 0) return false;
  const { rowCount } = await db.query(
    'SELECT 1 FROM contract_versions WHERE connection_id = $1 AND declared_version = ANY($2::text[]) LIMIT 1',
    [connectionId, declaredVersions],
  );
  return (rowCount ?? 0) > 0;
}

/** Whether the connection already has a rule with one of these (event, object) pairs. */
export async function hasRulePair(
  db: Queryable,
  connectionId: string,
  pairs: readonly { sourceEventType: string; expectedObjectType: string }[],
): Promise<boolean> {
  if (pairs.length === 0) return false;
  const { rowCount } = await db.query(
    `SELECT 1 FROM reconciliation_rules r
       JOIN unnest($2::text[], $3::text[]) AS p (source_event_type, expected_object_type)
         ON p.source_event_type = r.source_event_type AND p.expected_object_type = r.expected_object_type
      WHERE r.connection_id = $1 LIMIT 1`,
    [connectionId, pairs.map((p) => p.sourceEventType), pairs.map((p) => p.expectedObjectType)],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * How many of the given destination versions are still pristine drafts (never activated) and
 * how many of the given rules are still disabled with the copied definition.
 */
export async function countPristine(
  db: Queryable,
  connectionId: string,
  versionIds: readonly string[],
  rules: readonly { id: string; sourceEventType: string; expectedObjectType: string; maxDelayMs: number }[],
): Promise<{ drafts: number; rules: number }> {
  const drafts =
    versionIds.length === 0
      ? 0
      : (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM contract_versions
      WHERE connection_id = $1 AND id = ANY($2::text[]) AND lifecycle_status = 'draft' AND activated_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM contract_activations a WHERE a.contract_version_id = contract_versions.id)`,
            [connectionId, versionIds],
          )
        ).rows[0].n;
  const disabled =
    rules.length === 0
      ? 0
      : (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM reconciliation_rules r
       JOIN unnest($2::text[], $3::text[], $4::text[], $5::int[]) AS p (id, source_event_type, expected_object_type, max_delay_ms)
         ON p.id = r.id AND p.source_event_type = r.source_event_type AND p.expected_object_type = r.expected_object_type
        AND p.max_delay_ms = r.max_delay_ms
      WHERE r.connection_id = $1 AND NOT r.enabled`,
            [
              connectionId,
              rules.map((r) => r.id),
              rules.map((r) => r.sourceEventType),
              rules.map((r) => r.expectedObjectType),
              rules.map((r) => r.maxDelayMs),
            ],
          )
        ).rows[0].n;
  return { drafts, rules: disabled };
}

/** Whether an incident (open or resolved) names one of these versions or rules: evidence a removal would orphan. */
export async function hasIncidentReferences(
  db: Queryable,
  connectionId: string,
  versionIds: readonly string[],
  ruleIds: readonly string[],
): Promise<boolean> {
  if (versionIds.length === 0 && ruleIds.length === 0) return false;
  const { rowCount } = await db.query(
    `SELECT 1 FROM incidents
      WHERE connection_id = $1 AND (contract_version_id = ANY($2::text[]) OR rule_id = ANY($3::text[])) LIMIT 1`,
    [connectionId, versionIds, ruleIds],
  );
  return (rowCount ?? 0) > 0;
}

/** Removes drafts (operations first) and rules of one connection. */
export async function removeArtifacts(
  db: Queryable,
  connectionId: string,
  versionIds: readonly string[],
  ruleIds: readonly string[],
): Promise<void> {
  if (versionIds.length > 0) {
    await db.query(
      `DELETE FROM contract_operations o USING contract_versions v
        WHERE o.contract_version_id = v.id AND v.connection_id = $1 AND v.id = ANY($2::text[])`,
      [connectionId, versionIds],
    );
    await db.query('DELETE FROM contract_versions WHERE connection_id = $1 AND id = ANY($2::text[])', [connectionId, versionIds]);
  }
  if (ruleIds.length > 0) {
    await db.query('DELETE FROM reconciliation_rules WHERE connection_id = $1 AND id = ANY($2::text[])', [connectionId, ruleIds]);
  }
}
