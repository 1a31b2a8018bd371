// Types of reviewed repairs (03 "Repair proposal", "Replay dataset and run"; 00-decisions §6),
// shared by the management plane (request, review, export) and the analyzer (generation and
// validation in worker threads).

import type { Finding, SchemaShape } from '../analysis/types.js';

/** 03 Limits: at most 1,000 fixtures per dataset or proposal. */
export const MAX_REPLAY_FIXTURES = 1000;

/**
 * The redaction policy of every replay dataset: a fixture keeps the observed shape (kinds and
 * member names) and the observation id, never a value (the envelope holds none to begin with).
 */
export const FIXTURE_REDACTION_POLICY = 'service-fixture-shapes/1';

/** One frozen observation of a replay dataset. */
export interface ReplayFixture {
  observationId: string;
  shape: SchemaShape;
}

/** RFC 6902 operations a candidate uses. */
export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** What one change of a candidate does, for the review and the exported REPAIR.md. */
export type RepairChangeKind = 'property_added' | 'type_widened' | 'required_relaxed' | 'enum_widened';

export interface RepairChange {
  kind: RepairChangeKind;
  /** RFC 6901 pointer into the payload (the findings' convention: `-` for every array item). */
  payloadPath: string;
  /** RFC 6901 pointer into the operation schema of the node the change edits. */
  schemaPath: string;
  /** What the schema allowed there, and what it allows after the change, in words. */
  before: string;
  after: string;
  /** How many fixtures needed this change. */
  fixtureCount: number;
}

/**
 * A repair candidate: the JSON Patch against the operation's self-contained schema (as
 * `loadOperations` returns it, `$defs` included) and its result. Deterministic: the same schema
 * and fixtures give the same candidate, byte for byte.
 */
export interface RepairCandidate {
  /** `fingerprint(schema before the patch)`. */
  baseSchemaFingerprint: string;
  patch: JsonPatchOperation[];
  /** The patched schema. */
  schema: Record<string, unknown>;
  /** `fingerprint(schema)`. */
  schemaFingerprint: string;
  /** Sorted by schemaPath, then kind. */
  changes: RepairChange[];
}

/** The replay of every fixture against a schema with the analyzer's own comparison. */
export interface ReplayResult {
  status: 'passed' | 'failed';
  fixtureCount: number;
  conformingCount: number;
  /** The first 20 non-conforming fixtures with their findings. */
  failures: { observationId: string; findings: Finding[] }[];
}

/** The comparison a replay run uses, named in `adapterVersion` and fingerprinted in `adapterFingerprint`. */
export const REPLAY_ADAPTER_VERSION = 'service-shape-compare/1';

/** 03 Repair export bundle marker. */
export const REPAIR_EXPORT_MARKER = 'service-repair-export/1';
