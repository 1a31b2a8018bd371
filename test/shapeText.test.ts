import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import { SCHEMA_SHAPE_ID, SCHEMA_SHAPE_SCHEMA } from '../shared/envelope/schemas.js';
import { shapeText } from '../shared/envelope/shapeText.js';
import { validateEnvelope } from '../shared/envelope/validate.js';
import { SHAPE_MAX_DEPTH, SHAPE_MAX_FIELDS, SHAPE_MAX_FIELD_NAME } from '../shared/envelope/types.js';
import { envelope } from './helpers/ingest.js';

// shapeText (shared/envelope/shapeText.ts) decides alone whether a valid envelope's schemaShape
// is accepted: it must accept exactly the trees the schemaShape schema accepts, or the edge would
// store a tree the schema refuses. Compared here with the schema itself, compiled as validate.ts
// compiles it, on generated trees that break each rule and on the bounds.

const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, unicodeRegExp: false });
ajv.addKeyword({ keyword: 'x-issue', schemaType: 'string' });
ajv.addSchema(SCHEMA_SHAPE_SCHEMA);
const schemaAccepts = ajv.compile({ $ref: SCHEMA_SHAPE_ID });

const agrees = (tree: unknown) => (shapeText(tree) !== null) === schemaAccepts(tree);

/** Trees near the rules: right and wrong kinds, members each kind may or may not have, odd values. */
const treeArb: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(null, 1, 'string', [], true),
    fc
      .record(
        {
          kind: fc.constantFrom<unknown>('object', 'array', 'string', 'number', 'integer', 'boolean', 'null', 'date', 1, null),
          fields: fc.oneof(
            fc.dictionary(fc.string({ maxLength: 6, unit: 'binary' }), tie('node'), { maxKeys: 3 }),
            fc.constantFrom<unknown>(null, [], 'x'),
          ),
          items: tie('node'),
          extra: fc.constantFrom<unknown>(1, 'x'),
        },
        { requiredKeys: [] },
      )
      .chain((node) => fc.shuffledSubarray(Object.entries(node)).map((entries) => Object.fromEntries(entries))),
  ),
})).node;

function nested(depth: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let node = leaf;
  for (let level = 1; level < depth; level += 1) node = { kind: 'array', items: node };
  return node;
}

describe('shapeText against the schemaShape schema', () => {
  it('accepts exactly the trees the schema accepts, and writes an accepted tree kind first', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        if (!agrees(tree)) return false;
        const text = shapeText(tree);
        return text === null || (text.startsWith('{"kind":') && JSON.stringify(JSON.parse(text)) === text);
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees at the bounds: depth, fields per object, field-name length in code points', () => {
    const name = (length: number, unit = 'a') => unit.repeat(length);
    const cases: unknown[] = [
      nested(SHAPE_MAX_DEPTH, { kind: 'string' }),
      nested(SHAPE_MAX_DEPTH, { kind: 'array' }),
      nested(SHAPE_MAX_DEPTH, { kind: 'string', items: { kind: 'string' } }),
      nested(SHAPE_MAX_DEPTH + 1, { kind: 'string' }),
      nested(SHAPE_MAX_DEPTH - 1, { kind: 'object', fields: { a: { kind: 'null' } } }),
      nested(SHAPE_MAX_DEPTH - 1, { kind: 'object', fields: { a: { kind: 'object', fields: {} } } }),
      { kind: 'object', fields: Object.fromEntries(Array.from({ length: SHAPE_MAX_FIELDS }, (_, i) => [`f${i}`, { kind: 'null' }])) },
      { kind: 'object', fields: Object.fromEntries(Array.from({ length: SHAPE_MAX_FIELDS + 1 }, (_, i) => [`f${i}`, { kind: 'null' }])) },
      { kind: 'object', fields: { [name(SHAPE_MAX_FIELD_NAME)]: { kind: 'null' } } },
      { kind: 'object', fields: { [name(SHAPE_MAX_FIELD_NAME + 1)]: { kind: 'null' } } },
      // Surrogate pairs: 2 UTF-16 units, 1 character for maxLength.
      { kind: 'object', fields: { [name(SHAPE_MAX_FIELD_NAME, '😀')]: { kind: 'null' } } },
      { kind: 'object', fields: { [name(SHAPE_MAX_FIELD_NAME + 1, '😀')]: { kind: 'null' } } },
      { kind: 'object', fields: { '1': { kind: 'null' }, b: { kind: 'array', items: { kind: 'integer' } } } },
      { fields: {}, kind: 'object' },
      { kind: 'object' },
      { kind: 'array', fields: {} },
      { kind: 'string', items: { kind: 'string' } },
      { kind: 'object', fields: {}, items: { kind: 'string' } },
    ];
    const verdicts = cases.map((tree) => [shapeText(tree) !== null, schemaAccepts(tree)]);
    expect(verdicts.map(([walk]) => walk)).toEqual(verdicts.map(([, schema]) => schema));
    // The cases reach both verdicts: the bounds themselves pass, one past them fails.
    expect(verdicts.map(([walk]) => walk)).toEqual([
      true,
      false,
      false,
      false,
      true,
      false,
      true,
      false,
      true,
      false,
      true,
      false,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  it("reports a refused tree with the schema's issues, and hands a valid envelope's text to the rows", () => {
    const item = envelope({ integrationKey: 'svc_int_x', direction: 'outbound', protocol: 'http-api' });
    const payload = item.payload as Record<string, unknown>;
    payload.schemaShape = { items: { kind: 'string' }, kind: 'array' };
    const valid = validateEnvelope(item);
    expect(valid.valid && valid.shape).toBe('{"kind":"array","items":{"kind":"string"}}');
    payload.schemaShape = { kind: 'string', items: { kind: 'string' } };
    const refused = validateEnvelope(item);
    expect(refused.valid ? [] : refused.issues).toEqual(['/payload/schemaShape must not have items unless its kind is array']);
  });
});
