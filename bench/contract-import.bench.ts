// Contract import benchmark (issues 3 and 14, Done means: the largest corpus document imports in
// under 200 ms). Measures the largest document by size (also its first call in a fresh process:
// what one registration on a cold server pays) and the one with the most operations (the most
// schema work: Discord's). Run from the project root:
//   npx tsc -p bench/tsconfig.json && node dist/bench/contract-import.bench.js
// CORPUS_DIR overrides the corpus folder (default ../shared/corpus/openapi).

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Bench } from 'tinybench';
import { importOpenApi } from '../shared/contracts/importOpenApi.js';

const corpus = resolve(process.env.CORPUS_DIR ?? '../shared/corpus/openapi');
const documents = readdirSync(corpus)
  .filter((file) => file.endsWith('.json') && file !== 'manifest.json')
  .map((file) => {
    const text = readFileSync(join(corpus, file), 'utf8');
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return { file, bytes: statSync(join(corpus, file)).size, text, parsed };
  });
const largest = [...documents].sort((a, b) => b.bytes - a.bytes)[0];
// The first call in this process: what one registration pays on a server that imported nothing yet.
const coldStart = performance.now();
importOpenApi(JSON.parse(largest.text), 'http-api');
console.log(`${largest.file}: first call in a fresh process (JSON.parse + import) ${(performance.now() - coldStart).toFixed(1)} ms`);
const operationCount = (parsed: unknown): number => {
  try {
    return importOpenApi(parsed, 'http-api').operations.length;
  } catch {
    return 0;
  }
};
const widest = documents
  .map((document) => ({ document, operations: operationCount(JSON.parse(document.text)) }))
  .sort((a, b) => b.operations - a.operations)[0].document;

const bench = new Bench({ time: 3000, warmupTime: 500 });
for (const document of largest === widest ? [largest] : [largest, widest]) {
  const check = importOpenApi(document.parsed, 'http-api');
  const unchecked = check.operations.reduce((sum, operation) => sum + operation.unchecked.length, 0);
  console.log(
    `${document.file}: ${document.bytes} bytes, ${check.operations.length} operations, ${unchecked} unchecked notes, ${check.skipped.length} skipped`,
  );
  bench
    .add(`${document.file} importOpenApi (parsed document)`, () => {
      importOpenApi(document.parsed, 'http-api');
    })
    .add(`${document.file} JSON.parse + importOpenApi`, () => {
      importOpenApi(JSON.parse(document.text), 'http-api');
    });
}
await bench.run();

for (const task of bench.tasks) {
  const latency = task.result?.latency;
  if (!latency) throw new Error(`${task.name} did not run`);
  console.log(
    `${task.name}: mean ${latency.mean.toFixed(2)} ms, p99 ${(latency.p99 ?? NaN).toFixed(2)} ms, ${latency.samples.length} samples`,
  );
}
