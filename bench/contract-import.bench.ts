// Contract import benchmark (issue 3, Done means: the largest corpus document imports in under
// 200 ms). Run from the project root:
//   npx tsc -p bench/tsconfig.json && node dist/bench/contract-import.bench.js
// CORPUS_DIR overrides the corpus folder (default ../shared/corpus/openapi).

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Bench } from 'tinybench';
import { importOpenApi } from '../shared/contracts/importOpenApi.js';

const corpus = resolve(process.env.CORPUS_DIR ?? '../shared/corpus/openapi');
const largest = readdirSync(corpus)
  .filter((file) => file.endsWith('.json') && file !== 'manifest.json')
  .map((file) => ({ file, bytes: statSync(join(corpus, file)).size }))
  .sort((a, b) => b.bytes - a.bytes)[0];
const text = readFileSync(join(corpus, largest.file), 'utf8');
const parsed: unknown = JSON.parse(text);
const check = importOpenApi(parsed, 'http-api');

const bench = new Bench({ time: 3000, warmupTime: 500 });
bench
  .add('importOpenApi (parsed document)', () => {
    importOpenApi(parsed, 'http-api');
  })
  .add('JSON.parse + importOpenApi', () => {
    importOpenApi(JSON.parse(text), 'http-api');
  });
await bench.run();

console.log(`${largest.file}: ${largest.bytes} bytes, ${check.operations.length} operations, ${check.skipped.length} skipped`);
for (const task of bench.tasks) {
  const latency = task.result?.latency;
  if (!latency) throw new Error(`${task.name} did not run`);
  console.log(`${task.name}: mean ${latency.mean.toFixed(2)} ms, p99 ${(latency.p99 ?? NaN).toFixed(2)} ms, ${latency.samples.length} samples`);
}
