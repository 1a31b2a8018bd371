import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { importOpenApi } from '../shared/contracts/importOpenApi.js';
import {
  compareShape,
  compileContract,
  compileSchema,
  declaredPointers,
  fieldCoverage,
  observedPointers,
  transportErrorFinding,
  unknownOperationFinding,
  unobservedPointers,
  type AnalysedOperation,
  type Finding,
  type SchemaShape,
} from '../shared/analysis/index.js';
import { MAX_COVERAGE_PROPERTIES } from '../shared/analysis/coverage.js';
import { arr, B, I, missing, mismatch, N, NULL, obj, S, undeclared } from './helpers/shapes.js';

// 00-decisions §5 and the analyzer issue's finding semantics: pure, no stores.

type Schema = Record<string, unknown>;

const order: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'lines'],
  properties: {
    id: { type: 'string' },
    total: { type: 'number' },
    count: { type: 'integer' },
    note: { type: ['null', 'string'] },
    customer: {
      type: 'object',
      required: ['email'],
      properties: {
        email: { type: 'string' },
        address: { type: 'object', required: ['city'], properties: { city: { type: 'string' }, zip: { type: 'string' } } },
      },
    },
    lines: {
      type: 'array',
      items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, qty: { type: 'integer' } } },
    },
  },
};

const nodeSchema: Schema = {
  $ref: '#/$defs/Node',
  $defs: {
    Node: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
    },
  },
};

/** A Node tree `levels` deep whose last node has no name and an extra field. */
function deepNode(levels: number): SchemaShape {
  let shape: SchemaShape = obj({ extra: B });
  for (let i = 1; i < levels; i++) shape = obj({ name: S, children: arr(shape) });
  return shape;
}

const deepPath = (levels: number, last: string): string => `${'/children/-'.repeat(levels - 1)}/${last}`;

interface Case {
  name: string;
  schema: Schema;
  shape: SchemaShape;
  findings: Finding[];
}

const cases: Case[] = [
  { name: 'closed object, conforming', schema: order, shape: obj({ id: S, lines: arr(obj({ sku: S, qty: I })) }), findings: [] },
  {
    name: 'closed object, extra field is forbidden and not entered',
    schema: order,
    shape: obj({ id: S, lines: arr(), extra: obj({ deep: I }) }),
    findings: [undeclared('/extra', 'object', true)],
  },
  {
    name: 'open object, extra field is undeclared',
    schema: { type: 'object', properties: { id: { type: 'string' } } },
    shape: obj({ id: S, extra: arr(S) }),
    findings: [undeclared('/extra', 'array')],
  },
  {
    name: 'additionalProperties: true with properties still reports undeclared fields',
    schema: { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: true },
    shape: obj({ id: S, extra: NULL }),
    findings: [undeclared('/extra', 'null')],
  },
  {
    name: 'additionalProperties: false without properties forbids every field',
    schema: { type: 'object', additionalProperties: false },
    shape: obj({ a: S }),
    findings: [undeclared('/a', 'string', true)],
  },
  {
    name: 'free-form object (type only) declares no members',
    schema: { type: 'object' },
    shape: obj({ a: S, b: obj({ c: I }) }),
    findings: [],
  },
  {
    name: 'nested object mismatch and missing required at depth',
    schema: order,
    shape: obj({ id: S, lines: arr(), customer: obj({ email: I, address: obj({ zip: S }) }) }),
    findings: [missing('/customer/address/city', 'string'), mismatch('/customer/email', 'string', 'integer')],
  },
  {
    name: 'array of objects: one finding for all items',
    schema: order,
    shape: obj({ id: S, lines: arr(obj({ sku: I, extra: S })) }),
    findings: [undeclared('/lines/-/extra', 'string', false), mismatch('/lines/-/sku', 'string', 'integer')],
  },
  {
    name: 'missing required inside array items',
    schema: order,
    shape: obj({ id: S, lines: arr(obj({ qty: I })) }),
    findings: [missing('/lines/-/sku', 'string')],
  },
  { name: 'empty array: nothing below it', schema: order, shape: obj({ id: S, lines: arr() }), findings: [] },
  { name: 'schema without items accepts any item', schema: { type: 'array' }, shape: arr(obj({ a: arr(NULL) })), findings: [] },
  { name: 'OpenAPI 3.0 nullable (normalised) accepts null', schema: { type: ['string', 'null'] }, shape: NULL, findings: [] },
  {
    name: 'OpenAPI 3.0 nullable (normalised) rejects integer',
    schema: { type: ['string', 'null'] },
    shape: I,
    findings: [mismatch('', 'string|null', 'integer')],
  },
  { name: 'OpenAPI 3.1 type array accepts null', schema: { type: ['null', 'string'] }, shape: NULL, findings: [] },
  {
    name: 'OpenAPI 3.1 type array inside an object',
    schema: order,
    shape: obj({ id: S, lines: arr(), note: B }),
    findings: [mismatch('/note', 'string|null', 'boolean')],
  },
  {
    name: 'non-nullable rejects null',
    schema: order,
    shape: obj({ id: NULL, lines: arr() }),
    findings: [mismatch('/id', 'string', 'null')],
  },
  { name: 'integer fits number', schema: order, shape: obj({ id: S, lines: arr(), total: I }), findings: [] },
  {
    name: 'number does not fit integer',
    schema: order,
    shape: obj({ id: S, lines: arr(), count: N }),
    findings: [mismatch('/count', 'integer', 'number')],
  },
  {
    name: 'type list in fixed order, integer subsumed by number',
    schema: { type: ['null', 'boolean', 'integer', 'number', 'string', 'array'] },
    shape: obj({}),
    findings: [mismatch('', 'array|string|number|boolean|null', 'object')],
  },
  {
    name: 'integer and string list keeps integer',
    schema: { type: ['string', 'integer'] },
    shape: N,
    findings: [mismatch('', 'string|integer', 'number')],
  },
  {
    name: "enum without type allows its values' types",
    schema: { enum: ['a', 1] },
    shape: B,
    findings: [mismatch('', 'string|number', 'boolean')],
  },
  { name: 'enum without type: integer value kind fits', schema: { enum: ['a', 1] }, shape: I, findings: [] },
  { name: 'enum with null allows null', schema: { enum: ['a', null] }, shape: NULL, findings: [] },
  { name: 'enum without null rejects null', schema: { enum: ['a', 'b'] }, shape: NULL, findings: [mismatch('', 'string', 'null')] },
  {
    name: '$ref to a definition',
    schema: { $ref: '#/$defs/Pet', $defs: { Pet: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } } },
    shape: obj({ name: S }),
    findings: [missing('/id', 'integer'), undeclared('/name', 'string')],
  },
  {
    name: '$ref with siblings: sibling required and target properties apply together',
    schema: {
      $ref: '#/$defs/Pet',
      required: ['name'],
      additionalProperties: false,
      $defs: { Pet: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } } },
    },
    shape: obj({ id: I, x: S }),
    findings: [missing('/name', 'string'), undeclared('/x', 'string', true)],
  },
  {
    name: '$ref with siblings: types intersect',
    schema: { $ref: '#/$defs/Pet', type: ['object', 'null'], $defs: { Pet: { type: 'object', properties: { id: { type: 'integer' } } } } },
    shape: NULL,
    findings: [mismatch('', 'object', 'null')],
  },
  {
    name: '$ref with siblings: property schemas from both sides intersect',
    schema: {
      type: 'object',
      properties: { pet: { $ref: '#/$defs/Pet', properties: { id: { type: ['integer', 'string'] } } } },
      $defs: { Pet: { type: 'object', properties: { id: { type: ['number', 'null'] } } } },
    },
    shape: obj({ pet: obj({ id: S }) }),
    findings: [mismatch('/pet/id', 'integer', 'string')],
  },
  {
    name: '$ref to an escaped and percent-encoded definition name',
    schema: {
      type: 'object',
      properties: { a: { $ref: '#/$defs/~1components~1schemas~1a~01b~00c' }, s: { $ref: '#/$defs/with%20space' } },
      $defs: { '/components/schemas/a~1b~0c': { type: 'string' }, 'with space': { type: 'boolean' } },
    },
    shape: obj({ a: I, s: S }),
    findings: [mismatch('/a', 'string', 'integer'), mismatch('/s', 'boolean', 'string')],
  },
  { name: 'unresolvable $ref leaves the payload unchecked', schema: { $ref: '#/$defs/Missing' }, shape: obj({ a: S }), findings: [] },
  {
    name: 'recursive schema, conforming and deep',
    schema: nodeSchema,
    shape: obj({ name: S, children: arr(obj({ name: S, children: arr() })) }),
    findings: [],
  },
  {
    name: 'recursive schema, 32 levels deep',
    schema: nodeSchema,
    shape: deepNode(32),
    findings: [undeclared(deepPath(32, 'extra'), 'boolean', true), missing(deepPath(32, 'name'), 'string')].sort((a, b) =>
      a.path < b.path ? -1 : 1,
    ),
  },
  {
    name: 'recursion through the root (#)',
    schema: { type: 'object', properties: { v: { type: 'string' }, child: { $ref: '#' } } },
    shape: obj({ child: obj({ child: obj({ v: I }) }) }),
    findings: [mismatch('/child/child/v', 'string', 'integer')],
  },
  {
    name: 'type mismatch of an object hides its fields',
    schema: order,
    shape: obj({ id: S, lines: arr(), customer: arr(obj({ nope: I })) }),
    findings: [mismatch('/customer', 'object', 'array')],
  },
  {
    name: 'object where a string is declared: one finding, nothing below',
    schema: order,
    shape: obj({ id: obj({ a: I, b: S }), lines: arr() }),
    findings: [mismatch('/id', 'string', 'object')],
  },
  { name: 'root type mismatch has the root path', schema: order, shape: arr(S), findings: [mismatch('', 'object', 'array')] },
  {
    name: 'additionalProperties schema: undeclared and compared',
    schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'integer' } },
    shape: obj({ a: S, c: S, b: I }),
    findings: [undeclared('/b', 'integer'), mismatch('/c', 'integer', 'string'), undeclared('/c', 'string')],
  },
  {
    name: 'additionalProperties schema: findings below the field use its path',
    schema: {
      type: 'object',
      additionalProperties: { type: 'object', additionalProperties: false, properties: { x: { type: 'string' } } },
    },
    shape: obj({ m: obj({ x: B, y: S }) }),
    findings: [undeclared('/m', 'object'), mismatch('/m/x', 'string', 'boolean'), undeclared('/m/y', 'string', true)],
  },
  {
    name: 'escaped field names',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['q~/r'],
      properties: { 'a/b': { type: 'string' }, 'm~n': { type: 'integer' }, 'q~/r': {} },
    },
    shape: obj({ 'a/b': I, 'm~n': S, 'x/y~z': NULL }),
    findings: [
      mismatch('/a~1b', 'string', 'integer'),
      mismatch('/m~0n', 'integer', 'string'),
      missing('/q~0~1r', 'any'),
      undeclared('/x~1y~0z', 'null', true),
    ],
  },
  {
    name: 'required names without a declared type or property expect any',
    schema: { type: 'object', required: ['free', 'ghost'], properties: { free: {} } },
    shape: obj({}),
    findings: [missing('/free', 'any'), missing('/ghost', 'any')],
  },
  {
    name: 'required property declared by enum',
    schema: { type: 'object', required: ['status'], properties: { status: { enum: ['open', 'closed', null] } } },
    shape: obj({}),
    findings: [missing('/status', 'string|null')],
  },
  { name: 'empty schema accepts anything', schema: {}, shape: obj({ a: arr(obj({ b: NULL })) }), findings: [] },
  {
    name: 'no type but properties: checks objects, accepts other kinds',
    schema: { properties: { a: { type: 'string' } } },
    shape: obj({ a: S, b: I }),
    findings: [undeclared('/b', 'integer')],
  },
  { name: 'no type but properties: a string is fine', schema: { properties: { a: { type: 'string' } } }, shape: S, findings: [] },
  {
    name: 'no type but items: checks array items',
    schema: { items: { type: 'string' } },
    shape: arr(I),
    findings: [mismatch('/-', 'string', 'integer')],
  },
  {
    name: 'property declared false allows nothing',
    schema: { type: 'object', properties: { x: false } },
    shape: obj({ x: S }),
    findings: [mismatch('/x', 'nothing', 'string')],
  },
  {
    name: 'findings are sorted by path, then kind, whatever the field order',
    schema: { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string' }, m: { type: 'string' } } },
    shape: obj({ z: S, m: I, '1': B }),
    findings: [
      undeclared('/1', 'boolean', true),
      missing('/a', 'string'),
      mismatch('/m', 'string', 'integer'),
      undeclared('/z', 'string', true),
    ],
  },
  {
    name: 'more than 32 required properties',
    schema: {
      type: 'object',
      required: Array.from({ length: 40 }, (_, i) => `p${String(i).padStart(2, '0')}`),
      properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${String(i).padStart(2, '0')}`, { type: 'string' }])),
    },
    shape: obj(
      Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => `p${String(i).padStart(2, '0')}`)
          .filter((n) => n !== 'p05' && n !== 'p35')
          .map((n) => [n, S]),
      ),
    ),
    findings: [missing('/p05', 'string'), missing('/p35', 'string')],
  },
  {
    name: 'array of arrays',
    schema: { type: 'array', items: { type: 'array', items: { type: 'object', properties: { k: { type: 'boolean' } } } } },
    shape: arr(arr(obj({ k: S }))),
    findings: [mismatch('/-/-/k', 'boolean', 'string')],
  },
];

describe('compareShape', () => {
  it.each(cases)('$name', ({ schema, shape, findings }) => {
    expect(compareShape(compileSchema(schema), shape)).toStrictEqual(findings);
  });

  it('has at least 30 table cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it('gives the same findings from a reused compiled schema as from a fresh one', () => {
    const shared = compileSchema(order);
    const results = cases.filter((c) => c.schema === order).map((c) => compareShape(shared, c.shape));
    expect(results).toStrictEqual(cases.filter((c) => c.schema === order).map((c) => c.findings));
  });

  it('treats a field named __proto__ as a field', () => {
    const shape = JSON.parse(
      '{"kind":"object","fields":{"__proto__":{"kind":"string"},"id":{"kind":"string"},"lines":{"kind":"array"}}}',
    ) as SchemaShape;
    expect(compareShape(compileSchema(order), shape)).toStrictEqual([undeclared('/__proto__', 'string', true)]);
    const declared = JSON.parse('{"type":"object","required":["__proto__"],"properties":{"__proto__":{"type":"integer"}}}') as Schema;
    expect(compareShape(compileSchema(declared), shape)).toStrictEqual([
      mismatch('/__proto__', 'integer', 'string'),
      undeclared('/id', 'string'),
      undeclared('/lines', 'array'),
    ]);
    expect(compareShape(compileSchema(declared), obj({}))).toStrictEqual([missing('/__proto__', 'integer')]);
  });

  it('compares what the OpenAPI importer stores (3.0 nullable, 3.1 $ref siblings)', () => {
    const document = (version: string, nullable: Schema): Schema => ({
      openapi: version,
      info: { title: 't', version: '1' },
      paths: {
        '/pets': {
          get: {
            responses: {
              200: {
                description: 'ok',
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      additionalProperties: false,
                      properties: { tag: nullable, pet: { $ref: '#/components/schemas/Pet', required: ['name'] } },
                    },
                  },
                },
              },
            },
          },
        },
      },
      components: { schemas: { Pet: { type: 'object', properties: { name: { type: 'string' } } } } },
    });
    const shape = obj({ tag: NULL, pet: obj({}), extra: I });
    const v30 = importOpenApi(document('3.0.3', { type: 'string', nullable: true }), 'http-api').operations[0];
    const v31 = importOpenApi(document('3.1.0', { type: ['string', 'null'] }), 'http-api').operations[0];
    // 3.0 ignores the siblings of $ref, 3.1 applies them.
    expect(compareShape(compileSchema(v30.schema), shape)).toStrictEqual([undeclared('/extra', 'integer', true)]);
    expect(compareShape(compileSchema(v31.schema), shape)).toStrictEqual([
      undeclared('/extra', 'integer', true),
      missing('/pet/name', 'string'),
    ]);
    expect(compareShape(compileSchema(v31.schema), obj({ tag: B }))).toStrictEqual([mismatch('/tag', 'string|null', 'boolean')]);
  });
});

describe('finding helpers for callers', () => {
  it('unknown_operation names the observed operation', () => {
    expect(
      unknownOperationFinding({ method: 'POST', routeTemplate: '/v1/orders', payloadLocation: 'response', statusCode: 418 }),
    ).toStrictEqual({
      kind: 'unknown_operation',
      path: '',
      expected: 'a contract operation',
      observed: 'POST /v1/orders:response:418',
    });
  });

  it('transport_error for statusCode 0', () => {
    expect(transportErrorFinding()).toStrictEqual({
      kind: 'transport_error',
      path: '',
      expected: 'a protocol response',
      observed: 'statusCode 0',
    });
  });
});

describe('compileContract().match', () => {
  const op = (id: string, statusSelector: string, over: Partial<AnalysedOperation> = {}): AnalysedOperation => {
    const method = over.method ?? 'POST';
    const routeTemplate = over.routeTemplate ?? '/v1/orders';
    const payloadLocation = over.payloadLocation ?? 'response';
    return {
      id,
      operationKey: `${method} ${routeTemplate}:${payloadLocation}:${statusSelector}`,
      method,
      routeTemplate,
      payloadLocation,
      statusSelector,
      schema: { type: 'object' },
    };
  };
  const observed = (statusCode: number, over: Partial<{ method: string; routeTemplate: string; payloadLocation: string }> = {}) => ({
    method: 'POST',
    routeTemplate: '/v1/orders',
    payloadLocation: 'response',
    statusCode,
    ...over,
  });
  const contract = compileContract([
    op('cop_default', 'default'),
    op('cop_2xx', '2XX'),
    op('cop_201', '201'),
    op('cop_4xx', '4xx'),
    op('cop_get', '200', { method: 'GET' }),
    op('cop_request', 'default', { payloadLocation: 'request' }),
    op('cop_other_route', '200', { routeTemplate: '/v1/orders/{id}' }),
  ]);
  const matched = (statusCode: number, over = {}) => contract.match(observed(statusCode, over))?.id ?? null;

  it('prefers the exact code, then the range, then default', () => {
    expect(matched(201)).toBe('cop_201');
    expect(matched(200)).toBe('cop_2xx');
    expect(matched(299)).toBe('cop_2xx');
    expect(matched(404)).toBe('cop_4xx');
    expect(matched(500)).toBe('cop_default');
    expect(matched(302)).toBe('cop_default');
  });

  it('requires method, route template and payload location to match', () => {
    expect(matched(200, { method: 'GET' })).toBe('cop_get');
    expect(matched(201, { method: 'GET' })).toBeNull();
    expect(matched(201, { method: 'PUT' })).toBeNull();
    expect(matched(201, { payloadLocation: 'request' })).toBe('cop_request');
    expect(matched(201, { payloadLocation: 'message' })).toBeNull();
    expect(matched(200, { routeTemplate: '/v1/orders/{id}' })).toBe('cop_other_route');
    expect(matched(201, { routeTemplate: '/v1/orders/{id}' })).toBeNull();
    expect(matched(200, { routeTemplate: '/v1/unknown' })).toBeNull();
  });

  it('never matches statusCode 0, not even default', () => {
    expect(matched(0)).toBeNull();
    expect(matched(0, { payloadLocation: 'request' })).toBeNull();
  });

  it('matches a range without a default, and nothing outside it', () => {
    const only = compileContract([op('cop_2xx', '2xx')]);
    expect(only.match(observed(204))?.id).toBe('cop_2xx');
    expect(only.match(observed(301))).toBeNull();
    expect(only.match(observed(199))).toBeNull();
  });

  it('is independent of the order of the operations', () => {
    const reversed = compileContract([...contract.operations].reverse());
    for (const code of [0, 200, 201, 204, 302, 404, 500])
      expect(reversed.match(observed(code))?.id).toBe(contract.match(observed(code))?.id);
  });

  it('hands out the compiled schema of a matched operation', () => {
    const operation = contract.match(observed(201)) as AnalysedOperation;
    expect(compareShape(contract.schemaOf(operation), S)).toStrictEqual([mismatch('', 'object', 'string')]);
    expect(contract.schemas.size).toBe(7);
  });
});

describe('coverage', () => {
  it('lists every declared property, escaped, with - for array items', () => {
    expect(declaredPointers(order)).toStrictEqual([
      '/count',
      '/customer',
      '/customer/address',
      '/customer/address/city',
      '/customer/address/zip',
      '/customer/email',
      '/id',
      '/lines',
      '/lines/-/qty',
      '/lines/-/sku',
      '/note',
      '/total',
    ]);
    expect(
      declaredPointers({ type: 'object', properties: { 'a/b': { type: 'array', items: { properties: { 'm~n': {} } } } } }),
    ).toStrictEqual(['/a~1b', '/a~1b/-/m~0n']);
  });

  it('stops at a $ref target already on the path', () => {
    expect(declaredPointers(nodeSchema)).toStrictEqual(['/children', '/name']);
    expect(declaredPointers({ type: 'object', properties: { v: {}, child: { $ref: '#' } } })).toStrictEqual(['/child', '/v']);
    const sibling = {
      $ref: '#/$defs/Node',
      $defs: {
        Node: { type: 'object', properties: { name: {}, kids: { type: 'array', items: { $ref: '#/$defs/Node', required: ['name'] } } } },
      },
    };
    expect(declaredPointers(sibling)).toStrictEqual(['/kids', '/name']);
    const inline = {
      type: 'object',
      properties: { a: { type: 'object', properties: { x: { $ref: '#/properties/a' }, y: { $ref: '#/properties/a' } } } },
    };
    expect(declaredPointers(inline)).toStrictEqual(['/a', '/a/x', '/a/y']);
  });

  it('expands a shared definition on every path it is reached by', () => {
    const schema = {
      type: 'object',
      properties: { billing: { $ref: '#/$defs/Address' }, shipping: { $ref: '#/$defs/Address' } },
      $defs: { Address: { type: 'object', properties: { city: { type: 'string' } } } },
    };
    expect(declaredPointers(schema)).toStrictEqual(['/billing', '/billing/city', '/shipping', '/shipping/city']);
  });

  it('collects observed pointers and the declared properties never observed', () => {
    const first = obj({ id: S, lines: arr(obj({ sku: S })), 'x/y': NULL });
    const second = obj({ id: S, lines: arr(), customer: obj({ email: S }) });
    expect([...observedPointers(first)].sort()).toStrictEqual(['/id', '/lines', '/lines/-/sku', '/x~1y']);
    expect(unobservedPointers(order, [first, second])).toStrictEqual([
      '/count',
      '/customer/address',
      '/customer/address/city',
      '/customer/address/zip',
      '/lines/-/qty',
      '/note',
      '/total',
    ]);
    expect(unobservedPointers(compileSchema(order), [])).toStrictEqual(declaredPointers(order));
  });
});

describe('compareShape properties', () => {
  const names = ['id', 'name', 'children', 'lines', 'sku', 'qty', 'a/b', 'm~n', 'x', '0'];
  const shapes = fc.letrec<{ shape: SchemaShape; object: SchemaShape; array: SchemaShape; leaf: SchemaShape }>((tie) => ({
    shape: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('object'), tie('array')),
    leaf: fc.constantFrom<SchemaShape>(S, I, N, B, NULL),
    object: fc.dictionary(fc.constantFrom(...names), tie('shape'), { maxKeys: 6 }).map((fields) => obj(fields)),
    array: fc.option(tie('shape'), { nil: undefined }).map((items) => arr(items)),
  })).shape;
  const schemas: Schema[] = [
    order,
    nodeSchema,
    {},
    { type: 'object', properties: { x: { $ref: '#' } }, additionalProperties: { items: { $ref: '#' } } },
    ...cases.map((c) => c.schema),
  ];

  it('is deterministic, sorted, and never throws', () => {
    fc.assert(
      fc.property(shapes, fc.integer({ min: 0, max: schemas.length - 1 }), (shape, index) => {
        const reused = compileSchema(schemas[index]);
        const first = compareShape(reused, shape);
        const again = compareShape(reused, shape);
        const fresh = compareShape(compileSchema(schemas[index]), structuredClone(shape));
        expect(again).toStrictEqual(first);
        expect(fresh).toStrictEqual(first);
        const keys = first.map((f) => [f.path, f.kind] as const);
        const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
        expect(keys).toStrictEqual(sorted);
        for (const finding of first) expect(finding.path === '' || finding.path.startsWith('/')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('finds nothing when a shape is compared with the empty schema, and every observed pointer is declared by a schema built from it', () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        expect(compareShape(compileSchema({}), shape)).toStrictEqual([]);
        const schema = schemaOf(shape);
        expect(compareShape(compileSchema(schema), shape)).toStrictEqual([]);
        expect(unobservedPointers(schema, [shape])).toStrictEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

/** The closed schema a shape conforms to exactly (every field required). */
function schemaOf(shape: SchemaShape): Schema {
  if (shape.kind === 'object') {
    const properties: Schema = {};
    for (const name of Object.keys(shape.fields))
      Object.defineProperty(properties, name, { value: schemaOf(shape.fields[name]), enumerable: true });
    return { type: 'object', additionalProperties: false, required: Object.keys(shape.fields), properties };
  }
  if (shape.kind === 'array') return shape.items === undefined ? { type: 'array' } : { type: 'array', items: schemaOf(shape.items) };
  return { type: shape.kind };
}

describe('unchecked sub-schemas (00-decisions §7)', () => {
  // `meta`, the `tags` items and `Party` are where an import dropped a keyword (oneOf, …).
  const payload: Schema = {
    type: 'object',
    required: ['id'],
    properties: {
      id: { type: 'string' },
      meta: { type: 'object', required: ['kind'], properties: { kind: { type: 'string' }, size: { type: 'integer' } } },
      tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
      owner: { $ref: '#/$defs/Party' },
      payer: { $ref: '#/$defs/Party' },
      cosigner: { $ref: '#/$defs/Party', required: ['nick'], properties: { nick: { type: 'string' } } },
    },
    $defs: { Party: { type: 'object', additionalProperties: false, required: ['ref'], properties: { ref: { type: 'string' } } } },
  };
  const findings = (unchecked: string[], shape: SchemaShape): Finding[] => compareShape(compileSchema(payload, unchecked), shape);

  it('compares the declared properties of an unchecked node that requires nothing', () => {
    const open: Schema = { type: 'object', properties: { a: { type: 'string' } } };
    const shape = obj({ a: I, b: S });
    expect(compareShape(compileSchema(open, ['']), shape)).toStrictEqual([mismatch('/a', 'string', 'integer')]);
    expect(compareShape(compileSchema(open, []), shape)).toStrictEqual([mismatch('/a', 'string', 'integer'), undeclared('/b', 'string')]);
  });

  it('reports no undeclared field at an unchecked node, but its declared properties and required ones still', () => {
    const shape = obj({ id: S, meta: obj({ kind: I, size: S, extra: B, more: obj({ deep: I }) }) });
    expect(findings(['/properties/meta'], shape)).toStrictEqual([
      mismatch('/meta/kind', 'string', 'integer'),
      mismatch('/meta/size', 'integer', 'string'),
    ]);
    expect(findings(['/properties/meta'], obj({ id: S, meta: obj({ extra: B }) }))).toStrictEqual([missing('/meta/kind', 'string')]);
    // The node's own type is still checked.
    expect(findings(['/properties/meta'], obj({ id: S, meta: S }))).toStrictEqual([mismatch('/meta', 'object', 'string')]);
    // The same node, not listed, reports the fields nothing declares.
    expect(findings([], shape)).toStrictEqual([
      undeclared('/meta/extra', 'boolean'),
      mismatch('/meta/kind', 'string', 'integer'),
      undeclared('/meta/more', 'object'),
      mismatch('/meta/size', 'integer', 'string'),
    ]);
    expect(findings([], obj({ id: S, meta: obj({ extra: B }) }))).toStrictEqual([
      undeclared('/meta/extra', 'boolean'),
      missing('/meta/kind', 'string'),
    ]);
  });

  it('leaves only the listed node open: its parent and siblings still report undeclared fields', () => {
    const shape = obj({ id: S, meta: obj({ kind: S, extra: B }), tags: arr(obj({ name: S, extra: B })), extra: N });
    expect(findings(['/properties/meta'], shape)).toStrictEqual([undeclared('/extra', 'number'), undeclared('/tags/-/extra', 'boolean')]);
  });

  it('applies to array items', () => {
    const shape = obj({ id: S, tags: arr(obj({ name: I, colour: S })) });
    expect(findings(['/properties/tags/items'], shape)).toStrictEqual([mismatch('/tags/-/name', 'string', 'integer')]);
    expect(findings(['/properties/tags/items'], obj({ id: S, tags: arr(obj({ colour: S })) }))).toStrictEqual([
      missing('/tags/-/name', 'string'),
    ]);
    expect(findings([], shape)).toStrictEqual([undeclared('/tags/-/colour', 'string'), mismatch('/tags/-/name', 'string', 'integer')]);
  });

  it('applies to the root, and below it no field is undeclared (the dropped keyword could declare it at any depth)', () => {
    expect(findings([''], obj({ extra: B, meta: obj({ kind: S, x: S }) }))).toStrictEqual([missing('/id', 'string')]);
    expect(findings([''], obj({ id: S, meta: obj({ kind: I }) }))).toStrictEqual([mismatch('/meta/kind', 'string', 'integer')]);
    expect(findings([], obj({ id: S, meta: obj({ kind: S, x: S }) }))).toStrictEqual([undeclared('/meta/x', 'string')]);
    expect(findings([''], arr())).toStrictEqual([mismatch('', 'object', 'array')]);
    expect(findings([], obj({ id: S, extra: B }))).toStrictEqual([undeclared('/extra', 'boolean')]);
  });

  it('makes a $defs member unchecked everywhere it is referenced, also beside sibling keywords', () => {
    const shape = obj({
      id: S,
      owner: obj({ ref: S, x: S }),
      payer: obj({ ref: I, y: obj({}) }),
      cosigner: obj({ ref: S, z: B }),
    });
    expect(findings(['/$defs/Party'], shape)).toStrictEqual([
      missing('/cosigner/nick', 'string'),
      mismatch('/payer/ref', 'string', 'integer'),
    ]);
    expect(findings(['/$defs/Party'], obj({ id: S, owner: obj({ x: S }) }))).toStrictEqual([missing('/owner/ref', 'string')]);
    expect(findings([], shape)).toStrictEqual([
      missing('/cosigner/nick', 'string'),
      undeclared('/cosigner/z', 'boolean', true),
      undeclared('/owner/x', 'string', true),
      mismatch('/payer/ref', 'string', 'integer'),
      undeclared('/payer/y', 'object', true),
    ]);
    // Listing the place that holds the $ref leaves that place open, not the definition.
    expect(findings(['/properties/owner'], shape)).toStrictEqual([
      missing('/cosigner/nick', 'string'),
      undeclared('/cosigner/z', 'boolean', true),
      mismatch('/payer/ref', 'string', 'integer'),
      undeclared('/payer/y', 'object', true),
    ]);
  });

  it('ignores pointers that name nothing or no schema object', () => {
    const shape = obj({ id: S, extra: B });
    for (const pointer of ['/properties/nope', '/required', '/required/0', '/$defs/Nope', 'properties', '/properties/id/type']) {
      expect(findings([pointer], shape)).toStrictEqual([undeclared('/extra', 'boolean')]);
    }
  });

  it('a whole-payload unchecked schema ({}) gives no finding for any shape', () => {
    const shapes = fc.letrec<{ shape: SchemaShape; object: SchemaShape; array: SchemaShape; leaf: SchemaShape }>((tie) => ({
      shape: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('object'), tie('array')),
      leaf: fc.constantFrom<SchemaShape>(S, I, N, B, NULL),
      object: fc.dictionary(fc.string({ maxLength: 4 }), tie('shape'), { maxKeys: 5 }).map((fields) => obj(fields)),
      array: fc.option(tie('shape'), { nil: undefined }).map((items) => arr(items)),
    })).shape;
    const whole = compileSchema({}, ['']);
    fc.assert(
      fc.property(shapes, (shape) => {
        expect(compareShape(whole, shape)).toStrictEqual([]);
      }),
      { numRuns: 300 },
    );
    expect(compareShape(whole, obj({ a: arr(obj({ b: NULL })) }))).toStrictEqual([]);
  });

  describe('fieldCoverage', () => {
    const coverage = (schema: Schema, unchecked: string[]) => fieldCoverage(compileSchema(schema, unchecked));

    it('lists the unchecked places: the root, a property, array items, through a $ref', () => {
      expect(coverage(payload, ['', '/properties/meta', '/properties/tags/items', '/$defs/Party'])).toStrictEqual({
        declared: [
          '/cosigner',
          '/cosigner/nick',
          '/cosigner/ref',
          '/id',
          '/meta',
          '/meta/kind',
          '/meta/size',
          '/owner',
          '/owner/ref',
          '/payer',
          '/payer/ref',
          '/tags',
          '/tags/-/name',
        ],
        truncated: false,
        unchecked: ['', '/cosigner', '/meta', '/owner', '/payer', '/tags/-'],
      });
      expect(coverage(payload, []).unchecked).toStrictEqual([]);
      expect(coverage(payload, ['/properties/tags/items']).unchecked).toStrictEqual(['/tags/-']);
      // A raw schema carries no unchecked pointers.
      expect(fieldCoverage(payload).unchecked).toStrictEqual([]);
      expect(fieldCoverage(payload).declared).toStrictEqual(coverage(payload, ['']).declared);
    });

    it('lists a whole-payload unchecked schema as the root', () => {
      expect(coverage({}, [''])).toStrictEqual({ declared: [], truncated: false, unchecked: [''] });
    });

    it('stops listing at MAX_COVERAGE_PROPERTIES when shared definitions unfold to more places than that', () => {
      // Level i declares a and b, both level i - 1: 2^(i+1) - 2 places for a graph of 20 definitions.
      const $defs: Record<string, Schema> = { L0: { type: 'object' } };
      for (let i = 1; i <= 20; i++)
        $defs[`L${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/L${i - 1}` }, b: { $ref: `#/$defs/L${i - 1}` } } };
      const fields = fieldCoverage(compileSchema({ $ref: '#/$defs/L20', $defs }));
      expect(fields.truncated).toBe(true);
      expect(fields.declared).toHaveLength(MAX_COVERAGE_PROPERTIES);
      expect(fields.declared).toContain('/a/a/a');
      const small = fieldCoverage(compileSchema({ $ref: '#/$defs/L3', $defs }));
      expect(small).toMatchObject({ truncated: false });
      expect(small.declared).toHaveLength(14);
    });

    it('stops at recursion', () => {
      const tree: Schema = {
        type: 'object',
        properties: { tree: { $ref: '#/$defs/Node' }, forest: { type: 'array', items: { $ref: '#/$defs/Node' } } },
        $defs: {
          Node: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
          },
        },
      };
      expect(coverage(tree, ['/$defs/Node'])).toStrictEqual({
        declared: ['/forest', '/forest/-/children', '/forest/-/name', '/tree', '/tree/children', '/tree/name'],
        truncated: false,
        unchecked: ['/forest/-', '/tree'],
      });
      expect(coverage(nodeSchema, ['/$defs/Node'])).toStrictEqual({ declared: ['/children', '/name'], truncated: false, unchecked: [''] });
      // The recursion itself is unchecked, not only its first level: no finding deep inside.
      const deep = obj({ tree: obj({ name: S, children: arr(obj({ name: S, children: arr(obj({ extra: B, name: I })) })) }) });
      expect(compareShape(compileSchema(tree, ['/$defs/Node']), deep)).toStrictEqual([
        mismatch('/tree/children/-/children/-/name', 'string', 'integer'),
      ]);
      expect(compareShape(compileSchema(tree, []), deep)).toStrictEqual([
        undeclared('/tree/children/-/children/-/extra', 'boolean'),
        mismatch('/tree/children/-/children/-/name', 'string', 'integer'),
      ]);
    });
  });
});
