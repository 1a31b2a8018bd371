// Types of the contract importer (01 "Contract operation", 00-decisions §4).

export type ContractProtocol = 'http-api' | 'http-webhook' | 'queue' | 'scheduled-feed';
export type PayloadLocation = 'request' | 'response' | 'message';
export type OperationMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** 01 Limits: the OpenAPI methods the Contract API imports. */
export const OPERATION_METHODS: readonly OperationMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface ImportedOperation {
  /** 00-decisions §4: `<METHOD> <routeTemplate>:<payloadLocation>:<statusSelector>`. */
  operationKey: string;
  method: OperationMethod;
  routeTemplate: string;
  /**
   * Path prefixes of the servers the operation is served at (issue 26): each starts with `/` and
   * has no trailing `/`; sorted, distinct; empty when every server is at the root, and always for
   * webhooks and `json-schema` contracts. An observed route matches with or without one in front.
   */
  basePaths: string[];
  eventType: string | null;
  payloadLocation: PayloadLocation;
  /** `200`, `2XX` or `default`; request and message payloads use `default` (matches every status). */
  statusSelector: string;
  /** `fingerprint(schema)`: JCS, so independent of key order in the source document. */
  fingerprint: string;
  /** Self-contained JSON Schema in the supported subset, referenced components under `$defs`. */
  schema: Record<string, unknown>;
  /** What activation will not watch in this operation (00-decisions §7); empty for a `json-schema` contract. */
  unchecked: UncheckedSubschema[];
}

/**
 * A sub-schema of an operation left unchecked: the keyword at `pointer` (in the source document)
 * is outside the subset, so the stored sub-schema at `schemaPointer` (`""`: the whole payload)
 * holds only what the subset expresses and the analyzer reports nothing that keyword could allow
 * there (no undeclared field).
 */
export interface UncheckedSubschema {
  pointer: string;
  schemaPointer: string;
  reason: string;
}

/** A payload the import left out, with the RFC 6901 pointer of where it is declared. */
export interface SkippedPayload {
  pointer: string;
  reason: string;
}

export interface ImportResult {
  /** Sorted by operationKey. */
  operations: ImportedOperation[];
  /** Sorted by pointer, then reason; one entry per distinct (pointer, reason). */
  skipped: SkippedPayload[];
  /** Reduction steps the schemas took: the import's work, bounded by MAX_IMPORT_STEPS. */
  steps: number;
}

export interface OpenApiImportResult extends ImportResult {
  /** The document's `openapi` value, e.g. `3.1.0`, or `2.0` for a converted Swagger 2.0 document. */
  openapiVersion: string;
}

export interface OperationSelector {
  method: string;
  routeTemplate: string;
  payloadLocation: string;
  statusSelector: string;
}
