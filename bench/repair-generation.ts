// Repair generation and validation benchmark (issue 29: under 2 s for a 1,000-fixture dataset on
// a 200-field schema). One run is what the repair worker does for one proposal: generateRepair,
// then replayFixtures of the candidate, on fixtures parsed from JSON as the worker receives them.
// Three runs inline (the worker's own function on this thread), then three through RepairPool
// with one worker thread (structured clone of the task and the result included). Run from the
// project root:
//   npm run bench:build && node dist/bench/repair-generation.js
// No store is needed.

import { performance } from 'node:perf_hooks';
import { RepairPool } from '../analyzer/repairPool.js';
import repair, { type RepairTask } from '../analyzer/repairWorker.js';
import type { SchemaShape } from '../shared/analysis/types.js';
import type { ReplayFixture } from '../shared/repairs/types.js';
import { seededRandom } from '../test/helpers/seededRandom.js';

const FIXTURES = 1000;
const FIELDS = 200;
const RUNS = 3;
const TARGET_MS = 2000;

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'nullable' | 'status' | 'billing' | 'shipping' | 'lines';

/**
 * A closed object schema of 200 properties, half required: scalars, a nullable string, an enum,
 * two addresses through one `$defs` definition, and an array of line objects (a definition too).
 */
function design(): { schema: Record<string, unknown>; kinds: Map<string, Kind>; required: Set<string> } {
  const rotation: Kind[] = ['string', 'integer', 'number', 'boolean', 'nullable', 'string', 'string', 'integer'];
  const kinds = new Map<string, Kind>([
    ['status', 'status'],
    ['billing', 'billing'],
    ['shipping', 'shipping'],
    ['lines', 'lines'],
  ]);
  for (let i = 0; kinds.size < FIELDS; i++) kinds.set(`field_${i}`, rotation[i % rotation.length]);
  const properties: Record<string, unknown> = {};
  for (const [name, kind] of kinds) properties[name] = schemaOfKind(kind);
  const required = new Set([...kinds.keys()].filter((_, i) => i % 2 === 0));
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: [...required],
    properties,
    $defs: {
      Address: {
        type: 'object',
        required: ['city', 'zip'],
        properties: {
          street: { type: 'string' },
          city: { type: 'string' },
          zip: { type: 'string' },
          country: { enum: ['DE', 'FR', 'NL'] },
        },
      },
      Line: {
        type: 'object',
        required: ['sku', 'qty'],
        properties: { sku: { type: 'string' }, qty: { type: 'integer' }, price: { type: 'number' } },
      },
    },
  };
  return { schema, kinds, required };
}

function schemaOfKind(kind: Kind): Record<string, unknown> {
  switch (kind) {
    case 'nullable':
      return { type: ['string', 'null'] };
    case 'status':
      return { enum: ['open', 'paid', 'void'] };
    case 'billing':
    case 'shipping':
      return { $ref: '#/$defs/Address' };
    case 'lines':
      return { type: 'array', items: { $ref: '#/$defs/Line' } };
    default:
      return { type: kind };
  }
}

const S = (kind: SchemaShape['kind']): SchemaShape => ({ kind }) as SchemaShape;

/**
 * Fixtures: optional fields present or not, in a random order; each fixture carries some of ten
 * drifts, each seen in 5–30 % of fixtures: two new top-level fields (one an object), a nullable
 * string, a number where an integer is declared, a string where a boolean is, a required field
 * left out, `null` in the enum, a new address field and a missing `zip` (through the
 * definition), and a new line field.
 */
function fixtures(seed: number): ReplayFixture[] {
  const { kinds, required } = design();
  const next = seededRandom(seed);
  const names = [...kinds.keys()];
  const out: ReplayFixture[] = [];
  for (let n = 0; n < FIXTURES; n++) {
    const present = names.filter((name) => required.has(name) || next() < 0.7);
    for (let i = present.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [present[i], present[j]] = [present[j], present[i]];
    }
    const fields: Record<string, SchemaShape> = {};
    for (const name of present) fields[name] = shapeOfKind(kinds.get(name) as Kind, next);
    if (next() < 0.3) fields.extra_note = S('string');
    if (next() < 0.1) fields.extra_meta = { kind: 'object', fields: { source: S('string'), retries: S('integer') } };
    if (next() < 0.2) fields.field_5 = S('null');
    if (next() < 0.2) fields.field_1 = S('number');
    if (next() < 0.05) fields.field_3 = S('string');
    if (next() < 0.1) delete fields.field_0;
    if (next() < 0.15) fields.status = S('null');
    out.push({ observationId: `obs_${String(n).padStart(6, '0')}`, shape: JSON.parse(JSON.stringify({ kind: 'object', fields })) });
  }
  return out;

  function shapeOfKind(kind: Kind, random: () => number): SchemaShape {
    switch (kind) {
      case 'nullable':
        return S(random() < 0.3 ? 'null' : 'string');
      case 'number':
        return S(random() < 0.5 ? 'integer' : 'number');
      case 'status':
        return S('string');
      case 'billing':
      case 'shipping': {
        const address: Record<string, SchemaShape> = { city: S('string') };
        if (random() < 0.8) address.street = S('string');
        if (random() < 0.95) address.zip = S('string');
        if (random() < 0.5) address.country = S('string');
        if (random() < 0.1) address.county = S('string');
        return { kind: 'object', fields: address };
      }
      case 'lines': {
        if (random() < 0.1) return { kind: 'array' };
        const line: Record<string, SchemaShape> = { sku: S('string'), qty: S('integer'), price: S(random() < 0.5 ? 'integer' : 'number') };
        if (random() < 0.2) line.discount = S('number');
        return { kind: 'array', items: { kind: 'object', fields: line } };
      }
      default:
        return S(kind);
    }
  }
}

interface Run {
  totalMs: number;
  generatedInMs: number;
  validatedInMs: number;
  changes: number;
  passed: boolean;
}

function summary(label: string, runs: Run[]): void {
  const totals = runs.map((run) => run.totalMs);
  const spread = Math.max(...totals) - Math.min(...totals);
  for (const [i, run] of runs.entries()) {
    console.log(
      `${label} run ${i + 1}: ${run.totalMs.toFixed(1)} ms (generation ${run.generatedInMs.toFixed(1)} ms, validation ${run.validatedInMs.toFixed(1)} ms), `
        + `${run.changes} changes, replay ${run.passed ? 'passed' : 'FAILED'}`,
    );
  }
  const worst = Math.max(...totals);
  console.log(
    `${label}: ${totals.map((t) => t.toFixed(1)).join(' / ')} ms, spread ${spread.toFixed(1)} ms; `
      + `target < ${TARGET_MS} ms: ${worst < TARGET_MS ? 'met' : 'MISSED'}`,
  );
}

const { schema } = design();
const task: RepairTask = { schema, uncheckedPointers: [], fixtures: fixtures(29) };
console.log(`node ${process.version}, ${FIXTURES} fixtures, ${FIELDS}-field schema, ${RUNS} runs each`);

const inline: Run[] = [];
for (let i = 0; i < RUNS; i++) {
  const started = performance.now();
  const result = repair(task);
  if (i === 0) {
    for (const change of result.candidate.changes) {
      console.log(
        `  ${change.kind} ${change.schemaPath} (${change.payloadPath}): ${change.before} → ${change.after}, ${change.fixtureCount} fixtures`,
      );
    }
  }
  inline.push({
    totalMs: performance.now() - started,
    generatedInMs: result.generatedInMs,
    validatedInMs: result.validatedInMs,
    changes: result.candidate.changes.length,
    passed: result.replay.status === 'passed',
  });
}
summary('inline', inline);

const pool = new RepairPool(1);
try {
  const threaded: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const result = await pool.run(task);
    threaded.push({
      totalMs: performance.now() - started,
      generatedInMs: result.generatedInMs,
      validatedInMs: result.validatedInMs,
      changes: result.candidate.changes.length,
      passed: result.replay.status === 'passed',
    });
  }
  summary('RepairPool(1)', threaded);
} finally {
  await pool.close();
}
