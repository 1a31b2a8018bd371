// Where the ingest edge's CPU goes (issue 32): summarises the V8 CPU profiles of one edge process
// (`node --cpu-prof`: one file per thread, main and workers; `ingest-cpu.js --profile DIR` writes
// them) by area and by function. From the project root:
//
//   node dist/bench/edge-cpuprofile.js DIR/CPU.*.cpuprofile [--edge-us 43.3] [--top 25]
//
// Each sample goes to the area of the innermost frame on its stack that an area rule names
// (walking up from the leaf: a native such as `writeUtf8String` or `crc32` is charged to the
// product code that called it). Prints per thread and in total: ms and share of the work (samples
// neither idle nor start-up) per area, then the top functions by self time. A profile's sample
// times are wall time while its thread runs JS, including the time the OS leaves it waiting for a
// core (and a blocking call such as fdatasync): on a busy 2-core machine they add up to twice the
// CPU /proc counts. So only the shares are read from the profile: `--edge-us` (the edge's CPU µs
// per envelope that ingest-cpu.js measured from /proc) turns them into µs per envelope.
// Files ending .gz are read gunzipped.

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { gunzipSync } from 'node:zlib';

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
}

/** Areas in the order they are tested on each frame; the first rule that names a frame wins. */
const AREAS: [area: string, test: (f: CallFrame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['metrics (prom-client)', (f) => /prom-client|shared\/metrics|ingest\/common\/metrics/.test(f.url)],
  ['HMAC (signature)', (f) => /ingest\/auth\/signature/.test(f.url)],
  ['JSON parse', (f) => /ingest\/check\/parseItems/.test(f.url) && f.functionName === 'parseBatch'],
  // Each thread compiles its schemas once, in its first second: start-up, not per envelope.
  [
    'start-up (ajv compile, module loading)',
    (f) =>
      /ajv\/dist\/compile|ajv\/dist\/core|ajv\/dist\/vocabularies|fast-uri|node:internal\/modules/.test(f.url)
      || /^(compileForInternalLoader|wrapSafe)$/.test(f.functionName),
  ],
  [
    'validation (ajv + envelope rules)',
    (f) =>
      (/^validate\d*$/.test(f.functionName) && f.url === '')
      || /shared\/envelope\/validate|ingest\/check\/parseItems|ajv\/dist\/runtime/.test(f.url),
  ],
  ['rows (build, serialise)', (f) => /ingest\/common\/observationsTable|ingest\/check\/(checkBatch|newRows)/.test(f.url)],
  [
    'thread hand-off',
    (f) =>
      /ingest\/offload|ingest\/check\/(checker|checkWorker)|piscina|node:internal\/worker|messageport/.test(f.url)
      || f.functionName === 'postMessage',
  ],
  ['Redis client (ioredis, socket writes)', (f) => /ioredis|redis-parser|denque|cluster-key-slot|standard-as-callback/.test(f.url)],
  ['admission (Lua calls, dedup)', (f) => /ingest\/admission/.test(f.url)],
  ['ClickHouse shipping', (f) => /ingest\/log\/shipper|@clickhouse/.test(f.url)],
  ['log I/O (write-ahead log)', (f) => /ingest\/log\//.test(f.url)],
  ['auth (credentials)', (f) => /ingest\/auth\//.test(f.url)],
  ['HTTP (uWebSockets.js, answers)', (f) => /ingest\/http\/|ingest\/common\/edgeHttp|uWebSockets|uws/.test(f.url)],
  ['pipeline (other)', (f) => /ingest\/pipeline\//.test(f.url)],
  ['PostgreSQL client', (f) => /node_modules\/pg/.test(f.url)],
  ['(program)', (f) => f.functionName === '(program)'],
];

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? undefined : args[at + 1];
};
const files = args.filter((arg, index) => !arg.startsWith('--') && !args[index - 1]?.startsWith('--'));
if (files.length === 0) {
  process.stderr.write('usage: node dist/bench/edge-cpuprofile.js <file.cpuprofile>... [--edge-us N] [--top 25]\n');
  process.exit(2);
}
const edgeUs = Number(option('edge-us') ?? 0);
const top = Number(option('top') ?? 25);

interface Summary {
  areas: Map<string, number>;
  functions: Map<string, number>;
  totalMs: number;
}

function summarise(profile: Profile): Summary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const areaOf = new Map<number, string>();
  const resolveArea = (id: number): string => {
    const known = areaOf.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)!.callFrame;
    const rule = AREAS.find(([, test]) => test(frame));
    const up = parent.get(id);
    const area = rule ? rule[0] : up === undefined ? 'other (node internals, no product caller)' : resolveArea(up);
    areaOf.set(id, area);
    return area;
  };
  const summary: Summary = { areas: new Map(), functions: new Map(), totalMs: 0 };
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    const frame = byId.get(id)!.callFrame;
    const area = resolveArea(id);
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? `  ${frame.url.replace(/^.*?\/(dist|node_modules)\//, '$1/')}:${frame.lineNumber + 1}` : ''}`;
    summary.areas.set(area, (summary.areas.get(area) ?? 0) + ms);
    summary.functions.set(`${name}  [${area}]`, (summary.functions.get(`${name}  [${area}]`) ?? 0) + ms);
    summary.totalMs += ms;
  });
  return summary;
}

const add = (into: Map<string, number>, from: Map<string, number>) => {
  for (const [key, ms] of from) into.set(key, (into.get(key) ?? 0) + ms);
};

const STARTUP = 'start-up (ajv compile, module loading)';

/** `scaleWork`: the work (ms) that `--edge-us` stands for: the whole process's, also when printing one thread. */
function print(label: string, s: Summary, scaleWork?: number): void {
  const idle = s.areas.get('idle') ?? 0;
  const startup = s.areas.get(STARTUP) ?? 0;
  const work = s.totalMs - idle - startup;
  const usOf = (ms: number) => (ms / (scaleWork ?? work)) * edgeUs;
  console.log(
    `\n== ${label}: ${(s.totalMs / 1000).toFixed(2)} s sampled, ${(work / 1000).toFixed(2)} s of work (${(startup / 1000).toFixed(2)} s start-up and ${(idle / 1000).toFixed(2)} s idle left out)`,
  );
  console.log(`${'area'.padEnd(44)}       ms   % work${edgeUs ? '  µs/envelope' : ''}`);
  for (const [area, ms] of [...s.areas].sort((a, b) => b[1] - a[1])) {
    if (area === 'idle' || area === STARTUP) continue;
    console.log(
      `${area.padEnd(44)} ${ms.toFixed(0).padStart(8)} ${((100 * ms) / work).toFixed(1).padStart(8)}${edgeUs ? usOf(ms).toFixed(2).padStart(13) : ''}`,
    );
  }
  console.log(`top ${top} functions by self time (% of work; idle and start-up left out):`);
  for (const [name, ms] of [...s.functions]
    .filter(([name]) => !name.startsWith('(idle)') && !name.endsWith(`[${STARTUP}]`))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(
      `${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / work).toFixed(1).padStart(5)} %${edgeUs ? ` ${usOf(ms).toFixed(2).padStart(6)} µs` : ''}  ${name}`,
    );
  }
}

const summaries = files.map((file) => {
  const raw = readFileSync(file);
  return { file, summary: summarise(JSON.parse((file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')) as Profile) };
});
const total: Summary = { areas: new Map(), functions: new Map(), totalMs: 0 };
for (const { summary } of summaries) {
  add(total.areas, summary.areas);
  add(total.functions, summary.functions);
  total.totalMs += summary.totalMs;
}
const totalWork = total.totalMs - (total.areas.get('idle') ?? 0) - (total.areas.get(STARTUP) ?? 0);
if (summaries.length > 1)
  for (const { file, summary } of summaries) print(`${basename(file)} (µs of the whole edge's envelope)`, summary, totalWork);
print(files.length > 1 ? `all ${files.length} threads` : basename(files[0]), total);
