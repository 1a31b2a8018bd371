import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { SchemaShape } from '../shared/analysis/types.js';
import { importJsonSchema, importOpenApi } from '../shared/contracts/index.js';
import { isPlainObject, setOwn, unescapeToken } from '../shared/contracts/jsonPointer.js';
import { isAppError } from '../shared/errors/index.js';
import { fingerprint } from '../shared/fingerprint.js';
import { newId } from '../shared/ids.js';
import { buildRepairBundle, type RepairBundle, type RepairBundleInput } from '../shared/repairs/export/bundle.js';
import type { JsonPatchOperation, RepairChange } from '../shared/repairs/types.js';
import { applyOverlay } from './helpers/overlay.js';
import { sampleOf } from './helpers/shapeSamples.js';

// 03 "Repair export bundle" and issue 29 item 5: an approved, validated candidate as repair.json,
// REPAIR.md, repair.ts and repair.overlay.yaml. Each contract dialect the importer reads (OpenAPI
// 3.0 and 3.1, Swagger 2.0, a JSON Schema) is exported and checked from outside: the Overlay is
// applied with openapi-overlays-js and imported again, and repair.ts is compiled with tsc --strict
// and run against every fixture. Candidates are written here by hand (a JSON Patch and its
// result), independently of the generator. Pure: no store is touched.

const execFileAsync = promisify(execFile);

const S: SchemaShape = { kind: 'string' };
const N: SchemaShape = { kind: 'number' };
const I: SchemaShape = { kind: 'integer' };
const NULL: SchemaShape = { kind: 'null' };
const object = (fields: Record<string, SchemaShape>): SchemaShape => ({ kind: 'object', fields });
const array = (items?: SchemaShape): SchemaShape => (items === undefined ? { kind: 'array' } : { kind: 'array', items });

interface Case {
  contract: RepairBundleInput['contract'];
  operation: RepairBundleInput['operation'];
  patch: JsonPatchOperation[];
  changes: RepairChange[];
  fixtures: SchemaShape[];
  /** A value of the old, wrong shape that the repaired contract still refuses. */
  wrong: unknown;
}

const INFO = { title: 'Vendor', version: '1.0.0' };

// OpenAPI 3.0: the drift is inside a `$ref`'d component that a second operation shares.
const OPENAPI_30: Case = {
  contract: {
    format: 'openapi',
    importedFrom: 'openapi 3.0.3',
    declaredVersion: '1',
    document: {
      openapi: '3.0.3',
      info: INFO,
      paths: {
        '/v1/orders/{orderId}': {
          get: {
            parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
            responses: {
              '200': { description: 'the order', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
            },
          },
        },
        '/v1/orders': {
          post: {
            requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { note: { type: 'string' } } } } } },
            responses: {
              '201': { description: 'created', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } },
            },
          },
        },
      },
      components: {
        schemas: {
          Order: {
            type: 'object',
            required: ['id', 'total', 'status'],
            properties: {
              id: { type: 'string' },
              total: { type: 'number' },
              status: { type: 'string' },
              note: { type: 'string', description: 'free text' },
            },
            additionalProperties: false,
          },
        },
      },
    },
  },
  operation: { method: 'GET', routeTemplate: '/v1/orders/{orderId}', payloadLocation: 'response', statusSelector: '200' },
  patch: [
    { op: 'replace', path: '/$defs/Order/properties/total/type', value: ['number', 'string'] },
    { op: 'replace', path: '/$defs/Order/properties/note/type', value: ['null', 'string'] },
    { op: 'add', path: '/$defs/Order/properties/currency', value: { type: 'string' } },
    {
      op: 'add',
      path: '/$defs/Order/properties/shipping',
      value: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
    },
    { op: 'replace', path: '/$defs/Order/required', value: ['id', 'total'] },
  ],
  changes: [
    change('property_added', '/currency', '/$defs/Order/properties/currency', 'undeclared', 'string', 1),
    change('property_added', '/shipping', '/$defs/Order/properties/shipping', 'undeclared', 'object', 1),
    change('required_relaxed', '/status', '/$defs/Order/required', 'required', 'optional', 1),
    change('type_widened', '/note', '/$defs/Order/properties/note', 'string', 'string|null', 1),
    change('type_widened', '/total', '/$defs/Order/properties/total', 'number', 'string|number', 1),
  ],
  fixtures: [
    object({ id: S, total: S, status: S }),
    object({ id: S, total: N, currency: S }),
    object({ id: S, total: N, status: S, note: NULL, shipping: object({ city: S }) }),
  ],
  wrong: { id: 7, total: 1 },
};

// OpenAPI 3.1: an inline request body (type lists, nested array items) and a recursive component.
const OPENAPI_31: Case = {
  contract: {
    format: 'openapi',
    importedFrom: 'openapi 3.1.0',
    declaredVersion: '4',
    document: {
      openapi: '3.1.0',
      info: INFO,
      paths: {
        '/v1/catalog/items': {
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['sku', 'quantity'],
                    properties: {
                      sku: { type: 'string' },
                      quantity: { type: 'integer' },
                      lines: { type: 'array', items: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } },
                      category: { $ref: '#/components/schemas/Category' },
                    },
                  },
                },
              },
            },
            responses: { '204': { description: 'stored' } },
          },
        },
      },
      components: {
        schemas: {
          Category: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Category' } } },
          },
        },
      },
    },
  },
  operation: { method: 'POST', routeTemplate: '/v1/catalog/items', payloadLocation: 'request', statusSelector: 'default' },
  patch: [
    { op: 'replace', path: '/properties/quantity/type', value: ['integer', 'null'] },
    { op: 'add', path: '/properties/lines/items/properties/label', value: { type: 'string' } },
    { op: 'remove', path: '/required/0' },
    { op: 'add', path: '/$defs/Category/properties/slug', value: { type: 'string' } },
  ],
  changes: [
    change('property_added', '/category/slug', '/$defs/Category/properties/slug', 'undeclared', 'string', 1),
    change('property_added', '/lines/-/label', '/properties/lines/items/properties/label', 'undeclared', 'string', 1),
    change('required_relaxed', '/quantity', '/required', 'required', 'optional', 1),
    change('type_widened', '/quantity', '/properties/quantity', 'integer', 'integer|null', 1),
  ],
  fixtures: [
    object({
      sku: S,
      quantity: NULL,
      lines: array(object({ code: S, label: S })),
      category: object({ name: S, slug: S, children: array(object({ name: S, children: array() })) }),
    }),
    object({ sku: S, lines: array(), category: object({ name: S }) }),
    object({ sku: S, quantity: I }),
  ],
  wrong: { sku: 'a', quantity: 'many' },
};

// Swagger 2.0: `definitions`, and the schema under `responses.<status>.schema`.
const SWAGGER_DOCUMENT = {
  swagger: '2.0',
  info: INFO,
  consumes: ['application/json'],
  produces: ['application/json'],
  paths: {
    '/pets/{petId}': {
      get: {
        parameters: [{ name: 'petId', in: 'path', required: true, type: 'string' }],
        responses: { '200': { description: 'a pet', schema: { $ref: '#/definitions/Pet' } } },
      },
    },
    '/pets': {
      post: {
        parameters: [
          {
            name: 'pet',
            in: 'body',
            required: true,
            schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          },
        ],
        responses: { '201': { description: 'created', schema: { $ref: '#/definitions/Pet' } } },
      },
    },
  },
  definitions: {
    Pet: {
      type: 'object',
      required: ['id', 'name', 'tag'],
      properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' }, tag: { type: 'string' } },
    },
  },
};

const SWAGGER_RESPONSE: Case = {
  contract: { format: 'openapi', importedFrom: 'swagger 2.0', declaredVersion: '2', document: SWAGGER_DOCUMENT },
  operation: { method: 'GET', routeTemplate: '/pets/{petId}', payloadLocation: 'response', statusSelector: '200' },
  patch: [
    { op: 'add', path: '/$defs/Pet/properties/nickname', value: { type: 'string' } },
    { op: 'replace', path: '/$defs/Pet/required', value: ['id', 'name'] },
    { op: 'replace', path: '/$defs/Pet/properties/id/type', value: ['integer', 'string'] },
  ],
  changes: [
    change('property_added', '/nickname', '/$defs/Pet/properties/nickname', 'undeclared', 'string', 1),
    change('required_relaxed', '/tag', '/$defs/Pet/required', 'required', 'optional', 2),
    change('type_widened', '/id', '/$defs/Pet/properties/id', 'integer', 'string|integer', 1),
  ],
  fixtures: [object({ id: S, name: S }), object({ id: I, name: S, nickname: S })],
  wrong: { id: true, name: 'Rex' },
};

// Swagger 2.0 request: the `in: body` parameter's inline schema; every `required` member relaxed.
const SWAGGER_REQUEST: Case = {
  contract: { format: 'openapi', importedFrom: 'swagger 2.0', declaredVersion: '2', document: SWAGGER_DOCUMENT },
  operation: { method: 'POST', routeTemplate: '/pets', payloadLocation: 'request', statusSelector: 'default' },
  patch: [
    { op: 'remove', path: '/required' },
    { op: 'add', path: '/properties/species', value: { type: 'string' } },
  ],
  changes: [
    change('property_added', '/species', '/properties/species', 'undeclared', 'string', 1),
    change('required_relaxed', '/name', '/required', 'required', 'optional', 1),
  ],
  fixtures: [object({ species: S })],
  wrong: { name: 5 },
};

// A `json-schema` contract: the schema itself is the document (`$`), with its own `$defs`.
const JSON_SCHEMA: Case = {
  contract: {
    format: 'json-schema',
    importedFrom: 'json-schema',
    declaredVersion: '7',
    document: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['orderId', 'address', 'count'],
      properties: {
        orderId: { type: 'string' },
        count: { type: 'integer' },
        address: { $ref: '#/$defs/Address' },
        tags: { type: 'array', items: { type: 'string', enum: ['new', 'paid'] } },
      },
      $defs: { Address: { type: 'object', required: ['city'], properties: { city: { type: 'string' } }, additionalProperties: false } },
    },
  },
  operation: { method: 'POST', routeTemplate: '/hooks/orders', payloadLocation: 'message', statusSelector: 'default' },
  patch: [
    { op: 'add', path: '/$defs/Address/properties/line2', value: { type: 'string' } },
    { op: 'replace', path: '/properties/count/type', value: ['integer', 'null'] },
    { op: 'replace', path: '/required', value: ['address', 'orderId'] },
    { op: 'add', path: '/properties/tags/items/enum/-', value: 'refunded' },
  ],
  changes: [
    change('enum_widened', '/tags/-', '/properties/tags/items', 'new, paid', 'new, paid, refunded', 1),
    change('property_added', '/address/line2', '/$defs/Address/properties/line2', 'undeclared', 'string', 1),
    change('required_relaxed', '/count', '/required', 'required', 'optional', 1),
    change('type_widened', '/count', '/properties/count', 'integer', 'integer|null', 1),
  ],
  fixtures: [
    object({ orderId: S, address: object({ city: S, line2: S }), count: NULL }),
    object({ orderId: S, address: object({ city: S }), tags: array() }),
  ],
  wrong: { orderId: 'o-1', address: { city: 'Oslo', zip: '0150' } },
};

// OpenAPI 3.1 webhooks: the message of an inbound webhook is its request body.
const OPENAPI_31_WEBHOOK: Case = {
  contract: {
    format: 'openapi',
    importedFrom: 'openapi 3.1.0',
    declaredVersion: '5',
    document: {
      openapi: '3.1.0',
      info: INFO,
      webhooks: {
        'invoice.paid': {
          post: {
            requestBody: {
              content: {
                'application/cloudevents+json': {
                  schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, amount: { type: 'integer' } } },
                },
              },
            },
            responses: { '200': { description: 'received' } },
          },
        },
      },
    },
  },
  operation: { method: 'POST', routeTemplate: 'invoice.paid', payloadLocation: 'message', statusSelector: 'default' },
  patch: [
    { op: 'replace', path: '/properties/amount/type', value: ['integer', 'number'] },
    { op: 'add', path: '/properties/lines', value: { type: 'array', items: { type: 'string' } } },
    // A member named as YAML 1.1 spells a boolean: quoted in the Overlay, so that it stays a name.
    { op: 'add', path: '/properties/y', value: { type: 'number' } },
  ],
  changes: [
    change('property_added', '/lines', '/properties/lines', 'undeclared', 'array', 1),
    change('property_added', '/y', '/properties/y', 'undeclared', 'number', 1),
    change('type_widened', '/amount', '/properties/amount', 'integer', 'number', 1),
  ],
  fixtures: [object({ id: S, amount: N, lines: array(S), y: N }), object({ id: S, amount: I })],
  wrong: { amount: 5 },
};

const CASES: [string, Case][] = [
  ['OpenAPI 3.0', OPENAPI_30],
  ['OpenAPI 3.1', OPENAPI_31],
  ['OpenAPI 3.1 webhook', OPENAPI_31_WEBHOOK],
  ['Swagger 2.0 (response)', SWAGGER_RESPONSE],
  ['Swagger 2.0 (request body)', SWAGGER_REQUEST],
  ['JSON Schema', JSON_SCHEMA],
];

function change(
  kind: RepairChange['kind'],
  payloadPath: string,
  schemaPath: string,
  before: string,
  after: string,
  fixtureCount: number,
): RepairChange {
  return { kind, payloadPath, schemaPath, before, after, fixtureCount };
}

function protocolOf(operation: Case['operation']): 'http-api' | 'http-webhook' {
  return operation.payloadLocation === 'message' ? 'http-webhook' : 'http-api';
}

/** The operation's stored schema when `document` is registered: what the importer gives. */
function importedOperation(
  contract: Case['contract'],
  operation: Case['operation'],
  document: unknown,
): { schema: Record<string, unknown>; fingerprint: string } {
  if (contract.format === 'json-schema') return importJsonSchema(document, operation, protocolOf(operation));
  const key = `${operation.method} ${operation.routeTemplate}:${operation.payloadLocation}:${operation.statusSelector}`;
  const found = importOpenApi(document, protocolOf(operation)).operations.find((entry) => entry.operationKey === key);
  if (!found) throw new Error(`the document has no operation ${key}`);
  return found;
}

/** RFC 6902 add, replace and remove, applied to a copy (what the generator's candidate is the result of). */
function applyPatch(schema: Record<string, unknown>, patch: JsonPatchOperation[]): Record<string, unknown> {
  const out = structuredClone(schema);
  for (const operation of patch) {
    const tokens = operation.path.slice(1).split('/').map(unescapeToken);
    const last = tokens.pop() as string;
    let parent: unknown = out;
    for (const token of tokens) parent = (parent as Record<string, unknown>)[token];
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (operation.op === 'remove') parent.splice(index, 1);
      else parent.splice(index, operation.op === 'replace' ? 1 : 0, structuredClone(operation.value));
    } else if (isPlainObject(parent)) {
      if (operation.op === 'remove') delete parent[last];
      else setOwn(parent, last, structuredClone(operation.value));
    } else {
      throw new Error(`no parent for ${operation.path}`);
    }
  }
  return out;
}

function inputOf(testCase: Case, overrides: { incidentSummary?: string } = {}): RepairBundleInput {
  const { contract, operation, patch, changes, fixtures } = testCase;
  const base = importedOperation(contract, operation, contract.document).schema;
  const schema = applyPatch(base, patch);
  const operationKey = `${operation.method} ${operation.routeTemplate}:${operation.payloadLocation}:${operation.statusSelector}`;
  const dataset = { id: newId('rds_'), manifestHash: fingerprint(fixtures), fixtureCount: fixtures.length };
  return {
    proposal: {
      id: newId('rp_'),
      incidentId: newId('inc_'),
      connectionId: newId('int_'),
      mode: 'sandbox',
      operationKey,
      contractVersionId: newId('cv_'),
      datasetId: dataset.id,
    },
    incident: {
      kind: 'schema-drift',
      summary: overrides.incidentSummary ?? `Schema drift on ${operationKey}`,
      affectedRecords: fixtures.length,
      findings: changes.map((entry) => ({
        kind:
          entry.kind === 'property_added'
            ? 'undeclared_field'
            : entry.kind === 'required_relaxed'
              ? 'required_field_missing'
              : 'type_mismatch',
        path: entry.payloadPath,
        expected: entry.before,
        observed: entry.after,
        observationCount: entry.fixtureCount,
      })),
    },
    dataset,
    fixtures: fixtures.map((shape, index) => ({ observationId: `evt_fixture_${index}`, shape })),
    baseSchema: base,
    candidate: { baseSchemaFingerprint: fingerprint(base), patch, schema, schemaFingerprint: fingerprint(schema), changes },
    run: {
      id: newId('rrun_'),
      status: 'passed',
      fixtureCount: fixtures.length,
      conformingCount: fixtures.length,
      adapterVersion: 'service-shape-compare/1',
      adapterFingerprint: fingerprint({ adapter: 'service-shape-compare/1' }),
    },
    approval: { id: newId('rapr_'), approvalFingerprint: fingerprint({ approval: 1 }), decidedAt: '2026-11-29T10:00:00.000Z' },
    contract,
    operation,
  };
}

function fileOf(bundle: RepairBundle, name: string): string {
  const file = bundle.files.find((entry) => entry.name === name);
  if (!file) throw new Error(`the bundle has no ${name}`);
  return file.content;
}

interface GuardModule {
  guard: (value: unknown) => boolean;
  normalise: (value: unknown) => unknown;
}

/** Each case's input and bundle, built once: repair.ts of every case is type-checked in one tsc run. */
const BUILT = CASES.map(([name, testCase]) => {
  const input = inputOf(testCase);
  return { name, testCase, input, bundle: buildRepairBundle(input) };
});

let typecheckDir = '';
/** tsc's complaints about each case's repair.ts, by case name (empty when it compiles). */
const complaints = new Map<string, string>();

beforeAll(async () => {
  // Each file on its own (its own folder), all in one run: `tsc --strict --noEmit` of every repair.ts.
  typecheckDir = await mkdtemp(join(tmpdir(), 'repair-export-'));
  const files = await Promise.all(
    BUILT.map(async ({ bundle }, index) => {
      const file = join(typecheckDir, String(index), 'repair.ts');
      await mkdir(join(typecheckDir, String(index)));
      await writeFile(file, fileOf(bundle, 'repair.ts'));
      return file;
    }),
  );
  const tsc = join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc');
  let output = '';
  try {
    await execFileAsync(process.execPath, [tsc, '--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', ...files]);
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  BUILT.forEach(({ name }, index) => {
    const lines = output.split('\n').filter((line) => line.startsWith(files[index]));
    complaints.set(name, lines.join('\n'));
  });
  if (output !== '' && [...complaints.values()].every((lines) => lines === '')) throw new Error(`tsc failed: ${output}`);
}, 120_000);

afterAll(async () => {
  if (typecheckDir !== '') await rm(typecheckDir, { recursive: true, force: true });
});

/** Loads repair.ts compiled to JavaScript; it exports exactly one guard, `is<Type>`. */
async function loadGuard(source: string): Promise<GuardModule> {
  const compiled = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const module = (await import(`data:text/javascript;base64,${Buffer.from(compiled.outputText).toString('base64')}`)) as Record<
    string,
    unknown
  >;
  const guards = Object.keys(module).filter((name) => name.startsWith('is'));
  expect(guards, 'repair.ts exports one guard').toHaveLength(1);
  const typeName = guards[0].slice(2);
  return { guard: module[`is${typeName}`] as GuardModule['guard'], normalise: module[`normalise${typeName}`] as GuardModule['normalise'] };
}

function built(name: string): (typeof BUILT)[number] {
  const entry = BUILT.find((candidate) => candidate.name === name);
  if (!entry) throw new Error(`no case ${name}`);
  return entry;
}

function refusal(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    if (isAppError(error)) return error.code;
    throw error;
  }
  return 'built';
}

describe('repair export bundle', () => {
  describe.each(BUILT)('$name', ({ name, testCase, input, bundle }) => {
    it('has the four files in order, each with its media type and the SHA-256 of its content', () => {
      expect(bundle.marker).toBe('service-repair-export/1');
      expect(bundle.filename).toBe(`repair-${input.proposal.id}`);
      expect(bundle.files.map(({ name, mediaType }) => [name, mediaType])).toEqual([
        ['repair.json', 'application/json'],
        ['REPAIR.md', 'text/markdown'],
        ['repair.ts', 'text/typescript'],
        ['repair.overlay.yaml', 'application/yaml'],
      ]);
      for (const file of bundle.files) {
        expect(file.sha256, file.name).toBe(createHash('sha256').update(Buffer.from(file.content, 'utf8')).digest('hex'));
      }
      expect(bundle.fingerprint).toBe(
        fingerprint({ marker: bundle.marker, files: bundle.files.map(({ name, mediaType, sha256 }) => ({ name, mediaType, sha256 })) }),
      );
    });

    it('repair.json carries the patch, the patched schema and its bindings, and no reviewer', () => {
      const json = JSON.parse(fileOf(bundle, 'repair.json'));
      expect(json.patch).toEqual(input.candidate.patch);
      expect(json.schema).toEqual(input.candidate.schema);
      expect(json.schemaFingerprint).toBe(input.candidate.schemaFingerprint);
      expect(json.baseSchemaFingerprint).toBe(input.candidate.baseSchemaFingerprint);
      expect(json.approval).toEqual(input.approval);
      expect(json.dataset).toEqual(input.dataset);
      expect(json.run.id).toBe(input.run.id);
      expect(json.contract.contractVersionId).toBe(input.proposal.contractVersionId);
      const markdown = fileOf(bundle, 'REPAIR.md');
      expect(markdown).toContain(input.incident.summary);
      expect(markdown).toContain(`${input.run.conformingCount} of ${input.run.fixtureCount} fixture`);
      for (const entry of input.candidate.changes) expect(markdown).toContain(entry.payloadPath);
    });

    it('repair.overlay.yaml, applied to the registered document by another implementation, imports to the candidate schema', async () => {
      const overlay = parse(fileOf(bundle, 'repair.overlay.yaml'));
      expect(fileOf(bundle, 'repair.overlay.yaml')).not.toMatch(/^\s*(?:y|n|yes|no|on|off):/m);
      expect(overlay).toMatchObject({ overlay: '1.0.0', info: { version: '1.0.0' } });
      const document = structuredClone(testCase.contract.document);
      const repaired = await applyOverlay(document, fileOf(bundle, 'repair.overlay.yaml'));
      expect(document, 'the registered document is not changed').toEqual(testCase.contract.document);
      const imported = importedOperation(testCase.contract, testCase.operation, repaired);
      expect(imported.fingerprint).toBe(input.candidate.schemaFingerprint);
      expect(imported.schema).toEqual(input.candidate.schema);
    });

    it('repair.ts compiles under tsc --strict, accepts a value of every fixture and refuses the old, wrong shape', async () => {
      expect(complaints.get(name), 'tsc --strict --noEmit').toBe('');
      const { guard, normalise } = await loadGuard(fileOf(bundle, 'repair.ts'));
      for (const fixture of input.fixtures) {
        const value = sampleOf(fixture.shape);
        expect(guard(value), fixture.observationId).toBe(true);
        expect(normalise(value)).toBe(value);
      }
      expect(guard(testCase.wrong)).toBe(false);
      expect(() => normalise(testCase.wrong)).toThrow(TypeError);
      expect(guard('not an object')).toBe(false);
    });

    it('is deterministic: the same input gives the same bytes', () => {
      expect(buildRepairBundle(structuredClone(input))).toEqual(bundle);
    });
  });

  it('OpenAPI 3.0: null is written `nullable: true`, a list of types is flagged, and the operations sharing the component are named', async () => {
    const { bundle } = built('OpenAPI 3.0');
    const repaired = await applyOverlay(OPENAPI_30.contract.document, fileOf(bundle, 'repair.overlay.yaml'));
    const order = (repaired.components as { schemas: { Order: Record<string, { note: unknown; total: unknown }> } }).schemas.Order;
    expect(order.properties.note).toEqual({ type: 'string', description: 'free text', nullable: true });
    expect(order.properties.total).toEqual({ type: ['number', 'string'] });
    expect(order.required).toEqual(['id', 'total']);
    const json = JSON.parse(fileOf(bundle, 'repair.json'));
    expect(json.overlay.alsoChangedOperations).toEqual(['POST /v1/orders:response:201']);
    expect(json.overlay.editedSchemas).toEqual([
      '/components/schemas/Order',
      '/components/schemas/Order/properties/note',
      '/components/schemas/Order/properties/total',
    ]);
    expect(parse(fileOf(bundle, 'repair.overlay.yaml')).actions.map((action: { target: string }) => action.target)).toEqual([
      "$['components']['schemas']['Order']['required']",
      "$['components']['schemas']['Order']",
      "$['components']['schemas']['Order']['properties']",
      "$['components']['schemas']['Order']['properties']['note']",
      "$['components']['schemas']['Order']['properties']['total']",
    ]);
    expect(json.overlay.notes).toHaveLength(1);
    expect(fileOf(bundle, 'REPAIR.md')).toContain('OpenAPI 3.0 has no list of types');
  });

  it('the guard follows references, recursion, additionalProperties and enums of the patched schema', async () => {
    const { guard: isItem } = await loadGuard(fileOf(built('OpenAPI 3.1').bundle, 'repair.ts'));
    const deep = { sku: 'a', category: { name: 'n', children: [{ name: 'c', children: [{ name: 'd', slug: 's' }] }] } };
    expect(isItem(deep)).toBe(true);
    expect(isItem({ sku: 'a', category: { name: 'n', children: [{ name: 'c', children: [{ slug: 's' }] }] } })).toBe(false);
    expect(isItem({ sku: 'a', lines: [{ code: 'x', label: 3 }] })).toBe(false);
    expect(isItem({ sku: 'a', quantity: 1.5 })).toBe(false);

    const { guard: isHook, normalise } = await loadGuard(fileOf(built('JSON Schema').bundle, 'repair.ts'));
    expect(isHook({ orderId: 'o', address: { city: 'c' }, tags: ['refunded', 'new'] })).toBe(true);
    expect(isHook({ orderId: 'o', address: { city: 'c' }, tags: ['lost'] })).toBe(false);
    expect(() => normalise({ orderId: 'o', address: { city: 'c', zip: '1' } })).toThrow('/address/zip');
  });

  it('the same change written as whole members and array-index removals, in a shared response object, gives the same schema', async () => {
    const document = structuredClone(OPENAPI_30.contract.document) as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
      components: Record<string, unknown>;
    };
    const shared = (document.components as { schemas: { Order: unknown } }).schemas.Order;
    document.components = {
      responses: { OrderResponse: { description: 'an order', content: { 'application/json': { schema: shared } } } },
    };
    (document.paths['/v1/orders/{orderId}'].get as { responses: Record<string, unknown> }).responses = {
      '200': { $ref: '#/components/responses/OrderResponse' },
    };
    delete document.paths['/v1/orders'];
    const inline: Case = {
      ...OPENAPI_30,
      contract: { ...OPENAPI_30.contract, document },
      patch: [
        { op: 'replace', path: '/properties/total', value: { type: ['number', 'string'] } },
        { op: 'replace', path: '/properties/note', value: { type: ['null', 'string'] } },
        { op: 'add', path: '/properties/currency', value: { type: 'string' } },
        {
          op: 'add',
          path: '/properties/shipping',
          value: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
        },
        { op: 'remove', path: '/required/1' },
      ],
    };
    const input = inputOf(inline);
    const order = (built('OpenAPI 3.0').input.candidate.schema.$defs as { Order: unknown }).Order;
    expect(input.candidate.schemaFingerprint, 'the Order of the 3.0 case, patched the other way').toBe(fingerprint(order));
    const bundle = buildRepairBundle(input);
    const repaired = await applyOverlay(document, fileOf(bundle, 'repair.overlay.yaml'));
    expect(importedOperation(inline.contract, inline.operation, repaired).fingerprint).toBe(input.candidate.schemaFingerprint);
    expect(JSON.parse(fileOf(bundle, 'repair.json')).overlay.editedSchemas).toEqual([
      '/components/responses/OrderResponse/content/application~1json/schema',
    ]);
  });

  it('a candidate listing a type list or required in another order than the importer still exports', async () => {
    const unsorted: Case = {
      ...OPENAPI_31,
      patch: [
        { op: 'replace', path: '/properties/quantity/type', value: ['null', 'integer'] },
        { op: 'replace', path: '/required', value: ['sku'] },
      ],
    };
    const input = inputOf(unsorted);
    const repaired = await applyOverlay(OPENAPI_31.contract.document, fileOf(buildRepairBundle(input), 'repair.overlay.yaml'));
    const imported = importedOperation(unsorted.contract, unsorted.operation, repaired).schema as { properties: { quantity: unknown } };
    expect(imported.properties.quantity).toEqual({ type: ['integer', 'null'] });
  });

  describe('refusals', () => {
    it('a change inside a schema the import flattened from allOf is repair_export_operation_unsupported', () => {
      const document = structuredClone(OPENAPI_30.contract.document) as { components: { schemas: Record<string, unknown> } };
      document.components.schemas.Base = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } };
      document.components.schemas.Order = {
        allOf: [{ $ref: '#/components/schemas/Base' }, { type: 'object', properties: { total: { type: 'number' } } }],
      };
      const flattened: Case = {
        ...OPENAPI_30,
        contract: { ...OPENAPI_30.contract, document },
        patch: [{ op: 'add', path: '/$defs/Order/properties/currency', value: { type: 'string' } }],
        changes: [OPENAPI_30.changes[0]],
      };
      expect(refusal(() => buildRepairBundle(inputOf(flattened)))).toBe('repair_export_operation_unsupported');
    });

    it('a keyword beside a $ref in OpenAPI 3.0 (where it is ignored) is repair_export_operation_unsupported', () => {
      const document = structuredClone(OPENAPI_30.contract.document) as { paths: Record<string, { get?: unknown }> };
      document.paths['/v1/orders/{orderId}'].get = {
        responses: {
          '200': {
            description: 'wrapped',
            content: { 'application/json': { schema: { type: 'object', properties: { order: { $ref: '#/components/schemas/Order' } } } } },
          },
        },
      };
      const sibling: Case = {
        ...OPENAPI_30,
        contract: { ...OPENAPI_30.contract, document },
        patch: [{ op: 'add', path: '/properties/order/type', value: 'object' }],
        changes: [change('type_widened', '/order', '/properties/order', 'Order', 'object', 1)],
      };
      expect(refusal(() => buildRepairBundle(inputOf(sibling)))).toBe('repair_export_operation_unsupported');
    });

    it('a candidate whose schema holds a change its patch does not name is repair_export_operation_unsupported', () => {
      const input = inputOf(OPENAPI_31);
      const schema = structuredClone(input.candidate.schema) as { properties: Record<string, unknown> };
      schema.properties.extra = { type: 'boolean' };
      input.candidate = { ...input.candidate, schema, schemaFingerprint: fingerprint(schema) };
      expect(refusal(() => buildRepairBundle(input))).toBe('repair_export_operation_unsupported');
    });

    it('a candidate whose fingerprints do not match its schemas is repair_export_operation_unsupported', () => {
      const input = inputOf(OPENAPI_31);
      input.candidate = { ...input.candidate, schemaFingerprint: fingerprint({}) };
      expect(refusal(() => buildRepairBundle(input))).toBe('repair_export_operation_unsupported');
    });

    it.each([
      ['a field named like an e-mail address', 'jane.doe@example.com'],
      ['a field named like a Stripe live key', 'sk_live_51HxQ2eKq0Vb8TzR4mN7pL3a'],
      ['a field named like a GitHub token', 'ghp_R4nd0mT0k3nV4lu3Th4tL00ksR34l0000'],
      ['a field named like an AWS access key id', 'AKIAIOSFODNN7EXAMPLE'],
      ['a field named like a random token', 'Zk3q9XbT0wLm7RvY2cHd8NsPa5JeF1uG'],
    ])('%s is repair_export_sensitive_content', (_, name) => {
      const named: Case = {
        ...OPENAPI_30,
        patch: [{ op: 'add', path: `/$defs/Order/properties/${name}`, value: { type: 'string' } }],
        changes: [change('property_added', `/${name}`, `/$defs/Order/properties/${name}`, 'undeclared', 'string', 1)],
      };
      expect(refusal(() => buildRepairBundle(inputOf(named)))).toBe('repair_export_sensitive_content');
    });

    it('an incident summary holding a bearer token or a JWT is repair_export_sensitive_content', () => {
      const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJlc2lnbmF0dXJl';
      expect(refusal(() => buildRepairBundle(inputOf(OPENAPI_31, { incidentSummary: `sent with Bearer ${jwt}` })))).toBe(
        'repair_export_sensitive_content',
      );
      expect(refusal(() => buildRepairBundle(inputOf(OPENAPI_31, { incidentSummary: `token ${jwt}` })))).toBe(
        'repair_export_sensitive_content',
      );
      expect(refusal(() => buildRepairBundle(inputOf(OPENAPI_31, { incidentSummary: 'Schema drift on the catalog' })))).toBe('built');
    });
  });
});
