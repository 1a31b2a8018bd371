// Replay of a dataset's fixtures against a schema (00-decisions §6 validation) with the
// analyzer's own comparison: the operation schema compiled once with its unchecked pointers, as
// compileContract does, then compareShape for every fixture.

import { compareShape } from '../analysis/compare.js';
import { compileSchema } from '../analysis/compile.js';
import { fingerprint } from '../fingerprint.js';
import { REPLAY_ADAPTER_VERSION, type ReplayFixture, type ReplayResult } from './types.js';

/** A replay result lists this many non-conforming fixtures (03 "Replay dataset and run": no raw results beyond them). */
export const MAX_REPLAY_FAILURES = 20;

/**
 * What the replay's verdict depends on, named: the comparison and the schema and shape
 * vocabularies it reads. A change to any of them is a new `REPLAY_ADAPTER_VERSION`.
 */
const REPLAY_ADAPTER = {
  adapterVersion: REPLAY_ADAPTER_VERSION,
  compile: 'shared/analysis/compile.ts compileSchema(schema, uncheckedPointers)',
  comparison: 'shared/analysis/compare.ts compareShape',
  schemaKeywords: ['$defs', '$ref', 'additionalProperties', 'enum', 'items', 'properties', 'required', 'type'],
  shapeKinds: ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'],
  findingKinds: ['required_field_missing', 'type_mismatch', 'undeclared_field'],
  conformance: 'no finding',
  failuresListed: MAX_REPLAY_FAILURES,
};

let adapterFingerprint: string | undefined;

/** `fingerprint` of the replay's comparison, stable across processes and runs. */
export function replayAdapterFingerprint(): string {
  adapterFingerprint ??= fingerprint(REPLAY_ADAPTER);
  return adapterFingerprint;
}

/** Every fixture compared with `schema`; `passed` only when every one conforms (no finding). */
export function replayFixtures(
  schema: Record<string, unknown>,
  uncheckedPointers: readonly string[],
  fixtures: readonly ReplayFixture[],
): ReplayResult {
  const compiled = compileSchema(schema, uncheckedPointers);
  let conformingCount = 0;
  const failures: ReplayResult['failures'] = [];
  for (const fixture of fixtures) {
    const findings = compareShape(compiled, fixture.shape);
    if (findings.length === 0) conformingCount++;
    else if (failures.length < MAX_REPLAY_FAILURES) failures.push({ observationId: fixture.observationId, findings });
  }
  return { status: conformingCount === fixtures.length ? 'passed' : 'failed', fixtureCount: fixtures.length, conformingCount, failures };
}
