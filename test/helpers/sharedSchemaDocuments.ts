// OpenAPI documents whose schemas share sub-schemas: small documents that unfold to huge trees
// when every shared sub-schema is copied at each place it appears (issue 25, item 1).

import fc from 'fast-check';

type Doc = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function document(title: string, schema: unknown, schemas: Record<string, unknown>, paths?: Record<string, unknown>): Doc {
  return {
    openapi: '3.0.3',
    info: { title, version: '1' },
    paths: paths ?? { '/x': { get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema } } } } } } },
    components: { schemas },
  };
}

/**
 * The reviewer's document: `S<levels>` has two properties `a` and `b`, each
 * `{type: object, allOf: [{$ref: S<levels - 1>}]}`, down to `S0`, a plain object.
 */
export function allOfChainDocument(levels: number): Doc {
  const schemas: Record<string, unknown> = { S0: { type: 'object' } };
  for (let i = 1; i <= levels; i++) {
    schemas[`S${i}`] = {
      type: 'object',
      properties: { a: { type: 'object', allOf: [ref(`S${i - 1}`)] }, b: { type: 'object', allOf: [ref(`S${i - 1}`)] } },
    };
  }
  return document('chain', ref(`S${levels}`), schemas);
}

/** Two such chains `X` and `Y` merged by the payload's `allOf`: the merge meets each pair of shared members 2^depth times. */
export function allOfPairDocument(levels: number): Doc {
  const schemas: Record<string, unknown> = { X0: { type: 'object' }, Y0: { type: 'object', properties: { y: { type: 'string' } } } };
  for (const chain of ['X', 'Y']) {
    for (let i = 1; i <= levels; i++) {
      schemas[`${chain}${i}`] = {
        type: 'object',
        properties: { a: { type: 'object', allOf: [ref(`${chain}${i - 1}`)] }, b: { type: 'object', allOf: [ref(`${chain}${i - 1}`)] } },
      };
    }
  }
  return document('pair', { allOf: [ref(`X${levels}`), ref(`Y${levels}`)] }, schemas);
}

/** `operations` GET operations whose 200 responses all reference `Big`, an object of `properties` members. */
export function sharedDefinitionDocument(operations: number, properties: number): Doc {
  const members: Record<string, unknown> = {};
  for (let i = 0; i < properties; i++) members[`p${i}`] = { type: 'object', properties: { x: { type: 'string' }, y: { type: 'integer' } } };
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < operations; i++) {
    paths[`/r${i}`] = { get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema: ref('Big') } } } } } };
  }
  return document('shared', undefined, { Big: { type: 'object', properties: members } }, paths);
}

/**
 * Random documents of `C0`…`Cn` whose members reference earlier components directly, through
 * `allOf` (of one or two), or as array items: a random acyclic graph of shared definitions.
 */
export const sharedReferenceDocument: fc.Arbitrary<Doc> = fc.integer({ min: 2, max: 40 }).chain((count) =>
  fc
    .tuple(
      ...Array.from({ length: count }, (_, index) => fc.array(member(index), { minLength: 1, maxLength: 4 })),
      fc.array(
        fc.nat(count - 1).map((index) => count - 1 - Math.min(index, 2)),
        { minLength: 1, maxLength: 2 },
      ),
    )
    .map((parts) => {
      const roots = parts[parts.length - 1] as number[];
      const schemas: Record<string, unknown> = {};
      (parts.slice(0, -1) as unknown[][]).forEach((members, index) => {
        schemas[`C${index}`] = {
          type: 'object',
          properties: Object.fromEntries(members.map((schema, position) => [`m${position}`, schema])),
        };
      });
      const schema = roots.length === 1 ? ref(`C${roots[0]}`) : { allOf: roots.map((index) => ref(`C${index}`)) };
      return document('random', schema, schemas);
    }),
);

function member(index: number): fc.Arbitrary<unknown> {
  const primitive = fc.constantFrom({ type: 'string' }, { type: 'integer' }, { type: 'boolean', nullable: true });
  if (index === 0) return primitive;
  // Mostly the previous component, so that sharing compounds level after level.
  const earlier = fc
    .oneof({ weight: 3, arbitrary: fc.constant(index - 1) }, { weight: 1, arbitrary: fc.nat(index - 1) })
    .map((target) => ref(`C${target}`));
  return fc.oneof(
    primitive,
    earlier,
    earlier.map((target) => ({ type: 'object', allOf: [target] })),
    fc.tuple(earlier, earlier).map(([a, b]) => ({ allOf: [a, b] })),
    earlier.map((target) => ({ type: 'array', items: { allOf: [target] } })),
  );
}

/** Schema objects (and scalars) in a JSON value: the document size the import's cost is held to. */
export function jsonNodes(value: unknown): number {
  let nodes = 0;
  JSON.stringify(value, (_key, member: unknown) => {
    nodes++;
    return member;
  });
  return nodes;
}
