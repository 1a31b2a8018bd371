import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareShape, compileSchema } from '../shared/analysis/index.js';
import { withDefinitions, splitDefinitions } from '../shared/contracts/definitions.js';
import { importOpenApi, MAX_IMPORT_SCHEMA_BYTES } from '../shared/contracts/importOpenApi.js';
import { MAX_IMPORT_STEPS } from '../shared/contracts/schemaSubset.js';
import { isAppError } from '../shared/errors/index.js';
import { fingerprint } from '../shared/fingerprint.js';
import {
  allOfChainDocument,
  allOfPairDocument,
  jsonNodes,
  sharedDefinitionDocument,
  sharedReferenceDocument,
} from './helpers/sharedSchemaDocuments.js';
import { obj, undeclared } from './helpers/shapes.js';

/** The refusal `fn` throws: 400 invalid_contract's reason. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isAppError(error) && error.code === 'invalid_contract') return error.extra.reason as string;
    throw error;
  }
  throw new Error('the import was not refused');
}

/** Bytes the import's operations take as stored: their definitions once, each operation without them. */
function storedBytes(schemas: Record<string, unknown>[]): number {
  const stored = splitDefinitions(schemas);
  return JSON.stringify(stored.definitions).length + stored.schemas.reduce((sum, schema) => sum + JSON.stringify(schema).length, 0);
}

// Cost is held to the document's size: every bound is a multiple of it. Copying shared
// sub-schemas at each place they appear breaks them by orders of magnitude (2^levels).
const STEPS_PER_NODE = 2;
const BYTES_PER_BYTE = 4;
// Random documents: a schema is stored as it is while its tree is at most 4 times its graph (or
// 1,000 objects), and each merged conjunction is a new object: up to 26 times the document was
// seen over 5,000 runs, 12 times past the first 64 KiB.
const RANDOM_BYTES_PER_BYTE = 32;
const AS_IS_BYTES = 64 * 1024;

describe('contract import cost follows the document size, not its unfolded size (issue 25)', () => {
  it.each([20, 24])(
    'imports the %i-level allOf chain whose tree unfolds to 2^levels objects, each shared sub-schema stored once',
    (levels) => {
      const document = allOfChainDocument(levels);
      const result = importOpenApi(document, 'http-api');
      const [operation] = result.operations;
      expect(result.steps).toBeLessThanOrEqual(STEPS_PER_NODE * jsonNodes(document));
      expect(JSON.stringify(operation.schema).length).toBeLessThanOrEqual(BYTES_PER_BYTE * JSON.stringify(document).length);
      // The stored form still compares as the unfolded schema: deep members are declared, others are not.
      const compiled = compileSchema(
        operation.schema,
        operation.unchecked.map((entry) => entry.schemaPointer),
      );
      let deep = obj({});
      for (let i = 0; i < levels; i++) deep = obj({ a: deep, b: obj({}) });
      expect(compareShape(compiled, deep)).toStrictEqual([]);
      const path = `${'/a'.repeat(levels - 2)}/b/extra`;
      let extra = obj({ extra: obj({}) });
      for (let i = 1; i < levels; i++) extra = i === 1 ? obj({ b: extra }) : obj({ a: extra });
      expect(compareShape(compiled, extra)).toStrictEqual([undeclared(path, 'object')]);
      expect(operation.fingerprint).toBe(fingerprint(operation.schema));
    },
  );

  it('merges two such chains by allOf once per pair of shared members', () => {
    const document = allOfPairDocument(24);
    const result = importOpenApi(document, 'http-api');
    expect(result.steps).toBeLessThanOrEqual(STEPS_PER_NODE * jsonNodes(document));
    expect(JSON.stringify(result.operations[0].schema).length).toBeLessThanOrEqual(BYTES_PER_BYTE * JSON.stringify(document).length);
    const compiled = compileSchema(result.operations[0].schema);
    expect(compareShape(compiled, obj({ a: obj({ b: obj({}) }) }))).toStrictEqual([]);
    expect(compareShape(compiled, obj({ a: obj({}), z: obj({}) }))).toStrictEqual([undeclared('/z', 'object')]);
  });

  it('on random documents of shared references: steps and stored bytes within a multiple of the document size', () => {
    fc.assert(
      fc.property(sharedReferenceDocument, (document) => {
        const result = importOpenApi(document, 'http-api');
        expect(result.steps).toBeLessThanOrEqual(STEPS_PER_NODE * jsonNodes(document));
        expect(storedBytes(result.operations.map((operation) => operation.schema))).toBeLessThanOrEqual(
          RANDOM_BYTES_PER_BYTE * JSON.stringify(document).length + AS_IS_BYTES,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a document whose operations reference more schema than the per-import limit, naming it', () => {
    const reason = refusal(() => importOpenApi(sharedDefinitionDocument(2_000, 5_000), 'http-api'));
    expect(reason).toBe(`the operations' schemas exceed ${MAX_IMPORT_SCHEMA_BYTES} bytes in all (the limit per import)`);
  });

  it('refuses a document whose schemas need more reduction steps than the per-import limit, naming it', () => {
    const reason = refusal(() => importOpenApi(sharedDefinitionDocument(1, MAX_IMPORT_STEPS), 'http-api'));
    expect(reason).toBe(`the document's schemas need more than ${MAX_IMPORT_STEPS} reduction steps to import (the limit per import)`);
  });

  it('stores a definition shared by every operation once, and reads each operation back self-contained', () => {
    const result = importOpenApi(sharedDefinitionDocument(50, 200), 'http-api');
    const schemas = result.operations.map((operation) => operation.schema);
    const stored = splitDefinitions(schemas);
    expect(Object.keys(stored.definitions)).toStrictEqual(['Big']);
    expect(stored.schemas.every((schema) => !Object.hasOwn(schema, '$defs'))).toBe(true);
    expect(storedBytes(schemas) * 10).toBeLessThan(schemas.reduce((sum, schema) => sum + JSON.stringify(schema).length, 0));
    stored.schemas.forEach((schema, index) => {
      const read = withDefinitions(schema, stored.definitions);
      expect(read).toStrictEqual(schemas[index]);
      expect(fingerprint(read)).toBe(result.operations[index].fingerprint);
    });
  });
});
