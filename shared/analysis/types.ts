// Types of shape analysis (00-decisions §5; the analyzer issue's finding semantics, recorded in
// docs/decisions/analysis.md "Findings").

import type { SchemaShape } from '../envelope/types.js';

export type FindingKind =
  | 'undeclared_field'
  | 'required_field_missing'
  | 'type_mismatch'
  | 'unknown_operation'
  | 'transport_error'
  // 00-decisions §5 "Reconciliation": a source observation whose expected outcome never came.
  | 'expected-outcome-missing';

/**
 * One difference between an observed shape and the schema of its operation. `path` is an
 * RFC 6901 pointer into the payload; every item of an array is the token `-`, so one finding
 * covers all items (`/lines/-/sku`). The root is `""`.
 */
export interface Finding {
  kind: FindingKind;
  path: string;
  /** What the schema allows there, in words a reader understands (see compare.ts). */
  expected: string;
  /** What the shape shows there. */
  observed: string;
  /** undeclared_field only: true when the schema forbids the field (`additionalProperties: false`). */
  forbidden?: boolean;
}

/** A contract operation as the analyzer needs it (a row of contract_operations). */
export interface AnalysedOperation {
  id: string;
  operationKey: string;
  method: string;
  routeTemplate: string;
  /**
   * The servers' path prefixes (issue 26): an observed route also matches with one of them in
   * front of `routeTemplate`. Absent: none (a row read before issue 26's import).
   */
  basePaths?: readonly string[];
  payloadLocation: string;
  /** `200`, `2XX` or `default`. */
  statusSelector: string;
  /** Stored subset schema: type, properties, required, items, enum, additionalProperties, $ref/$defs. */
  schema: Record<string, unknown>;
  /**
   * Pointers into `schema` of the sub-schemas the import left unchecked (00-decisions §7): the
   * comparison reports no undeclared field there (their dropped keyword could declare it).
   */
  uncheckedPointers?: readonly string[];
}

/** The operation identity of an observation (its transport). */
export interface ObservedOperation {
  method: string;
  routeTemplate: string;
  payloadLocation: string;
  statusCode: number;
}

export type { SchemaShape };
