// Console page timings (issue 31): each page's server time (its `Server-Timing: app`) and its load
// time, as the browser tests measured them on the local stack (test/helpers/consolePages.ts
// appends one line per page load to test-artifacts/console/timings.jsonl). Run the console's
// browser tests three times, then this: per page, the number of loads, the median and the maximum
// of each figure, and the pages over the targets (50 ms server, 300 ms load). It reports; the
// tests never assert a time.
//
//   rm -f test-artifacts/console/timings.jsonl
//   for run in 1 2 3; do npx vitest run --project redis test/console*.test.ts test/deviceConsentPage.test.ts; done
//   npm run bench:build && node dist/bench/console-pages.js

import { readFileSync } from 'node:fs';

const FILE = process.argv[2] ?? 'test-artifacts/console/timings.jsonl';
const SERVER_TARGET_MS = 50;
const LOAD_TARGET_MS = 300;

interface Timing {
  page: string;
  serverMs: number;
  firstByteMs: number;
  loadMs: number;
  test: string;
}

const timings: Timing[] = readFileSync(FILE, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Timing);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '—');

const byPage = new Map<string, Timing[]>();
for (const timing of timings) byPage.set(timing.page, [...(byPage.get(timing.page) ?? []), timing]);

console.log(`${timings.length} page loads of ${byPage.size} pages, from ${FILE}\n`);
console.log('| page | loads | server median | server max | load median | load max |');
console.log('| --- | --- | --- | --- | --- | --- |');
const over: string[] = [];
for (const [page, loads] of [...byPage].sort(([a], [b]) => a.localeCompare(b))) {
  const server = loads.map((load) => load.serverMs);
  const load = loads.map((item) => item.loadMs);
  console.log(
    `| ${page} | ${loads.length} | ${ms(median(server))} | ${ms(Math.max(...server))} | ${ms(median(load))} | ${ms(Math.max(...load))} |`,
  );
  if (median(server) > SERVER_TARGET_MS || median(load) > LOAD_TARGET_MS) over.push(page);
}
const allServer = timings.map((timing) => timing.serverMs).filter(Number.isFinite);
const allLoad = timings.map((timing) => timing.loadMs);
console.log(
  `\nall pages: server median ${ms(median(allServer))} ms, max ${ms(Math.max(...allServer))} ms; load median ${ms(median(allLoad))} ms, max ${ms(Math.max(...allLoad))} ms`,
);
console.log(
  `pages whose median is over the targets (${SERVER_TARGET_MS} ms server, ${LOAD_TARGET_MS} ms load): ${over.join(', ') || 'none'}`,
);
