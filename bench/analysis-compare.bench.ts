// Shape comparison benchmark (analyzer issue: at least 200,000 comparisons/s per core for
// 20-field shapes). Compares distinct shape objects, parsed from JSON as the analyzer receives
// them, with a compiled schema, one thread. Run from the project root:
//   npx tsc -p bench/tsconfig.json && node dist/bench/analysis-compare.bench.js
// BENCH_TIME_MS (default 1500) is the measuring time of one run; BENCH_SHAPES (default 20000)
// how many distinct shapes each scenario cycles through. No store is needed.

import { compareShape, compileSchema, type CompiledSchema, type SchemaShape } from '../shared/analysis/index.js';
import { seededRandom } from '../test/helpers/seededRandom.js';

const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 1500);
const SHAPES = Number(process.env.BENCH_SHAPES ?? 20_000);
const RUNS = 3;

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'nullable' | 'address' | 'lines';

/**
 * An object schema of `fields` properties: scalars of every kind, a nullable string, one nested
 * object (4 properties) and one array of objects (3 properties); half of them required, closed.
 */
function design(fields: number): { schema: Record<string, unknown>; kinds: Map<string, Kind>; required: Set<string> } {
  const rotation: Kind[] = ['string', 'integer', 'number', 'boolean', 'nullable', 'string', 'string', 'integer'];
  const kinds = new Map<string, Kind>([
    ['address', 'address'],
    ['lines', 'lines'],
  ]);
  for (let i = 0; kinds.size < fields; i++) kinds.set(`field_${i}`, rotation[i % rotation.length]);
  const properties: Record<string, unknown> = {};
  for (const [name, kind] of kinds) properties[name] = schemaOfKind(kind);
  const required = new Set([...kinds.keys()].filter((_, i) => i % 2 === 0));
  return { schema: { type: 'object', additionalProperties: false, required: [...required], properties }, kinds, required };
}

function schemaOfKind(kind: Kind): Record<string, unknown> {
  switch (kind) {
    case 'nullable':
      return { type: ['null', 'string'] };
    case 'address':
      return {
        type: 'object',
        required: ['city'],
        properties: {
          street: { type: 'string' },
          city: { type: 'string' },
          zip: { type: 'string' },
          country: { enum: ['DE', 'FR', 'NL'] },
        },
      };
    case 'lines':
      return {
        type: 'array',
        items: {
          type: 'object',
          required: ['sku'],
          properties: { sku: { type: 'string' }, qty: { type: 'integer' }, price: { type: 'number' } },
        },
      };
    default:
      return { type: kind };
  }
}

function shapeOfKind(kind: Kind, next: () => number): SchemaShape {
  switch (kind) {
    case 'nullable':
      return { kind: next() < 0.3 ? 'null' : 'string' };
    // A producer may write a whole number as 1.0: `integer` shapes are valid numbers.
    case 'number':
      return { kind: next() < 0.5 ? 'integer' : 'number' };
    case 'address': {
      const fields: Record<string, SchemaShape> = { city: { kind: 'string' } };
      if (next() < 0.8) fields.street = { kind: 'string' };
      if (next() < 0.8) fields.zip = { kind: 'string' };
      if (next() < 0.5) fields.country = { kind: 'string' };
      return { kind: 'object', fields };
    }
    case 'lines':
      return next() < 0.1
        ? { kind: 'array' }
        : {
            kind: 'array',
            items: {
              kind: 'object',
              fields: { sku: { kind: 'string' }, qty: { kind: 'integer' }, price: { kind: next() < 0.5 ? 'integer' : 'number' } },
            },
          };
    default:
      return { kind };
  }
}

/**
 * Distinct shapes: optional fields present or not, fields in a random order, nullable and
 * number kinds varied. With `drift`, each shape also has 1–3 of: an undeclared field, a type
 * mismatch, a missing required field.
 */
function shapes(fields: number, drift: boolean, count: number, seed: number): SchemaShape[] {
  const { kinds, required } = design(fields);
  const next = seededRandom(seed);
  const names = [...kinds.keys()];
  const out: SchemaShape[] = [];
  for (let n = 0; n < count; n++) {
    const present = names.filter((name) => required.has(name) || next() < 0.7);
    for (let i = present.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [present[i], present[j]] = [present[j], present[i]];
    }
    const entries: [string, SchemaShape][] = present.map((name) => [name, shapeOfKind(kinds.get(name) as Kind, next)]);
    if (drift) {
      const changes = 1 + Math.floor(next() * 3);
      for (let c = 0; c < changes; c++) {
        const what = Math.floor(next() * 3);
        if (what === 0) entries.push([`extra_${Math.floor(next() * 50)}`, { kind: 'string' }]);
        else if (what === 1) {
          const index = Math.floor(next() * entries.length);
          entries[index] = [entries[index][0], { kind: 'boolean' }];
        } else {
          const index = entries.findIndex(([name]) => required.has(name));
          if (index >= 0) entries.splice(index, 1);
        }
      }
    }
    // Parsed from text, as the analyzer gets shapes (hidden classes and key order as in production).
    out.push(JSON.parse(JSON.stringify({ kind: 'object', fields: Object.fromEntries(entries) })) as SchemaShape);
  }
  return out;
}

interface RunResult {
  perSecond: number;
  perCpuSecond: number;
  findings: number;
}

function run(schema: CompiledSchema, list: SchemaShape[]): RunResult {
  let compared = 0;
  let findings = 0;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(TIME_MS) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < list.length; i++) findings += compareShape(schema, list[i]).length;
    compared += list.length;
    now = process.hrtime.bigint();
  }
  const seconds = Number(now - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  return { perSecond: compared / seconds, perCpuSecond: compared / cpuSeconds, findings: findings / compared };
}

const fmt = (value: number): string => Math.round(value).toLocaleString('en-US');

console.log(`node ${process.version}, ${SHAPES} distinct shapes per scenario, ${RUNS} runs of ${TIME_MS} ms each`);
for (const fields of [20, 200]) {
  const compiled = compileSchema(design(fields).schema);
  for (const drift of [false, true]) {
    const list = shapes(fields, drift, SHAPES, fields * 2 + Number(drift));
    // Warm-up: compiles the lazily compiled children and lets the JIT settle.
    const warm = process.hrtime.bigint() + 500_000_000n;
    while (process.hrtime.bigint() < warm) for (const shape of list) compareShape(compiled, shape);
    const results = Array.from({ length: RUNS }, () => run(compiled, list));
    const rates = results.map((result) => result.perCpuSecond);
    const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
    const spread = ((Math.max(...rates) - Math.min(...rates)) / mean) * 100;
    console.log(
      `${String(fields).padStart(3)} fields, ${drift ? 'drift   ' : 'no drift'}: `
        + `${fmt(mean)} comparisons/s per core (runs ${rates.map(fmt).join(' / ')}, spread ${spread.toFixed(1)} %), `
        + `wall ${fmt(results.reduce((a, r) => a + r.perSecond, 0) / RUNS)}/s, ${results[0].findings.toFixed(2)} findings per shape`,
    );
  }
}
