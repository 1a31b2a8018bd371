import { performance } from 'node:perf_hooks';
import { generateRepair } from '../shared/repairs/generate.js';
import { replayFixtures } from '../shared/repairs/replay.js';
import type { RepairCandidate, ReplayFixture, ReplayResult } from '../shared/repairs/types.js';

/** One Piscina task: an operation's self-contained schema and a frozen dataset's fixtures (00-decisions §6). */
export interface RepairTask {
  schema: Record<string, unknown>;
  uncheckedPointers: string[];
  fixtures: ReplayFixture[];
}

export interface RepairWorkResult {
  candidate: RepairCandidate;
  /** Every fixture replayed against the candidate's schema with the analyzer's comparison. */
  replay: ReplayResult;
  generatedInMs: number;
  validatedInMs: number;
}

/** Piscina's entry point: generation, then validation of the candidate by replay. */
export default function repair(task: RepairTask): RepairWorkResult {
  const started = performance.now();
  const candidate = generateRepair(task.schema, task.uncheckedPointers, task.fixtures);
  const generated = performance.now();
  const replay = replayFixtures(candidate.schema, task.uncheckedPointers, task.fixtures);
  return { candidate, replay, generatedInMs: generated - started, validatedInMs: performance.now() - generated };
}
