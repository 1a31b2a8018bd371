// The import of a registration (01 "Import rules"): pure CPU, no store. It runs on a worker
// thread (importPool.ts) so that a large or adversarial document never holds the event loop.

import { importJsonSchema, importOpenApi, type ImportedOperation, type SkippedPayload } from '../../shared/contracts/index.js';
import { invalidContract } from '../../shared/contracts/invalidContract.js';
import { fingerprint } from '../../shared/fingerprint.js';
import type { Protocol } from '../connections/connectionStore.js';
import type { ContractFormat } from './contractStore.js';
import { findUnstorableJson } from './storableJson.js';

/** The members of a registration body the import reads. */
export interface ImportInput {
  format: ContractFormat;
  document: Record<string, unknown>;
  operation?: Record<string, string>;
}

/** What registration stores of an import. */
export interface ImportedContract {
  importedFrom: string;
  fingerprint: string;
  operations: ImportedOperation[];
  skipped: SkippedPayload[];
  contentSignature: string;
}

/**
 * Runs the import (pure CPU, before any transaction) under 01 "Import rules": OpenAPI for
 * `http-api` and `http-webhook` only; an operation-bound JSON Schema for every protocol (the
 * selector is checked against the protocol's methods and payload locations).
 */
export function importContract(input: ImportInput, protocol: Protocol): ImportedContract {
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
      throw invalidContract(
        `OpenAPI documents can be registered only for http-api and http-webhook Integrations; a ${protocol} Integration uses format json-schema with an operation selector`,
        [],
      );
    }
    const result = importOpenApi(input.document, protocol);
    ({ operations, skipped } = result);
    importedFrom =
      result.openapiVersion === '2.0' ? 'swagger-2.0' : result.openapiVersion.startsWith('3.1') ? 'openapi-3.1' : 'openapi-3.0';
  } else {
    operations = [importJsonSchema(input.document, input.operation, protocol)];
    skipped = [];
    importedFrom = 'json-schema';
  }
  const documentFingerprint = fingerprint(input.document);
  const selector =
    input.format === 'json-schema'
      ? {
          method: operations[0].method,
          routeTemplate: operations[0].routeTemplate,
          payloadLocation: operations[0].payloadLocation,
          statusSelector: operations[0].statusSelector,
        }
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
