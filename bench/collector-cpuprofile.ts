// Summarises a V8 CPU profile (`node --cpu-prof`) by self time: where a collector benchmark's time
// goes (issue 15). Run from the project root:
//
//   node --cpu-prof --cpu-prof-dir=/tmp/collector-prof dist/bench/collector-observe.bench.js
//   node dist/bench/collector-cpuprofile.js /tmp/collector-prof/<file>.cpuprofile [--top 30] [--filter collector/dist]
//
// Prints the top functions by self time (function, file:line, ms, % of the profile), then self time
// per file, and, with --filter, the total time (self + callees) of every function whose file
// contains the filter text, by inclusive time. Samples in the profile's idle and GC nodes are
// shown as such.

import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const args = process.argv.slice(2);
const file = args.find((arg) => !arg.startsWith('--'));
if (!file) {
  process.stderr.write('usage: node dist/bench/collector-cpuprofile.js <file.cpuprofile> [--top N] [--filter TEXT]\n');
  process.exit(2);
}
const option = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? undefined : args[at + 1];
};
const top = Number(option('top') ?? 30);
const filter = option('filter');

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

// Self time per node: each sample's delta goes to the node sampled.
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i += 1) {
  const id = profile.samples[i];
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const totalUs = [...selfUs.values()].reduce((sum, value) => sum + value, 0);

/** A file's URL without the checkout's prefix: `collector/dist/shape.js`, `dist/bench/…`, `node_modules/…`. */
function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  for (const marker of ['/node_modules/', '/collector/dist/', '/dist/']) {
    const at = path.lastIndexOf(marker);
    if (at !== -1) return path.slice(at + 1);
  }
  return path;
}
const keyOf = (frame: CallFrame): string =>
  `${frame.functionName || '(anonymous)'}  ${frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ''}`.trim();

const selfByFunction = new Map<string, number>();
const selfByFile = new Map<string, number>();
for (const [id, us] of selfUs) {
  const frame = byId.get(id)!.callFrame;
  selfByFunction.set(keyOf(frame), (selfByFunction.get(keyOf(frame)) ?? 0) + us);
  const where = frame.url ? shortUrl(frame.url) : `(${frame.functionName || 'native'})`;
  selfByFile.set(where, (selfByFile.get(where) ?? 0) + us);
}

const ms = (us: number) => (us / 1000).toFixed(1).padStart(9);
const pct = (us: number) => `${((us / totalUs) * 100).toFixed(1).padStart(5)} %`;
console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled, ${profile.samples.length.toLocaleString('en-US')} samples`);
console.log(`\nTop ${top} functions by self time:`);
for (const [name, us] of [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)} ms ${pct(us)}  ${name}`);
console.log('\nSelf time by file:');
for (const [name, us] of [...selfByFile].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${ms(us)} ms ${pct(us)}  ${name}`);

if (filter !== undefined) {
  // Inclusive time: a sample counts once for every distinct function on its stack.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!frame.url.includes(filter)) continue;
      const key = keyOf(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  console.log(`\nInclusive time (self + callees) of functions in files matching "${filter}":`);
  for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)} ms ${pct(us)}  ${name}`);
}
