// Where the ingest edge's CPU goes, by CPU time (issue 32): summarises `perf script` output of one
// edge process sampled by `perf record -g` (`ingest-cpu.js --perf DIR` records it and writes
// DIR/edge.perf.script). From the project root:
//
//   node dist/bench/edge-perf.js DIR/edge.perf.script [--edge-us 35.0] [--top 20]
//
// Why beside edge-cpuprofile.ts: V8's profiler samples wall time, so a call that wakes another
// process (a socket write to Redis, posting to a worker thread) is charged the time the OS then
// leaves the edge waiting for a core; perf samples CPU cycles only. The edge is started with
// --perf-basic-prof, so JIT frames have names (a name can be stale where V8 reused the code's
// address: a few frames are misnamed).
//
// Threads are told apart by what their stacks hold: the edge's event loop, the check workers
// (node::worker::Worker::Run), libuv's pool (the log's writes and fdatasync) and V8's helper
// threads (garbage collection). Each sample goes to the innermost frame of our code (dist/<dir>)
// or of a package (node_modules/<name>), walking up from the leaf past Node's internals; a
// sample without one is garbage collection, kernel or other native work.

import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from './benchProcess.js';

interface Sample {
  tid: number;
  /** Frames from the leaf up: symbol and its object (dso). */
  frames: { sym: string; dso: string }[];
}

/**
 * `perf script -F tid,ip,sym,dso` text: a header line per sample (the tid, right-aligned, so it may
 * start with spaces), then one tab-indented line per frame.
 */
export function parsePerfScript(text: string): Sample[] {
  const samples: Sample[] = [];
  let current: Sample | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (!line.startsWith('\t')) {
      current = { tid: Number.parseInt(line.trim(), 10), frames: [] };
      samples.push(current);
      continue;
    }
    const match = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^)]*)\)\s*$/.exec(line);
    if (match && current) current.frames.push({ sym: match[1], dso: match[2] });
  }
  return samples;
}

type ThreadKind = 'edge thread' | 'check workers' | 'libuv pool (log I/O)' | 'V8 helpers (GC)';

function threadKinds(samples: Sample[]): Map<number, ThreadKind> {
  const seen = new Map<number, Set<ThreadKind>>();
  for (const { tid, frames } of samples) {
    const kinds = seen.get(tid) ?? new Set<ThreadKind>();
    seen.set(tid, kinds);
    for (const { sym } of frames) {
      if (sym.includes('node::worker::Worker::Run')) kinds.add('check workers');
      else if (sym.includes('node::NodeMainInstance::Run') || sym.startsWith('node::Start')) kinds.add('edge thread');
      else if (sym === 'worker' || sym.startsWith('uv__work') || sym.startsWith('uv__fs')) kinds.add('libuv pool (log I/O)');
    }
  }
  const kinds = new Map<number, ThreadKind>();
  for (const [tid, found] of seen) {
    const order: ThreadKind[] = ['check workers', 'edge thread', 'libuv pool (log I/O)'];
    kinds.set(tid, order.find((kind) => found.has(kind)) ?? 'V8 helpers (GC)');
  }
  return kinds;
}

const GC = /Scavenge|MarkCompact|ConcurrentMarking|Sweeper|MinorMC|Heap::|GCTracer|Evacuat|ObjectVisitor|MarkingVisitor/;

/** The area of one sample: our code's directory, a package, or what the native leaf does. */
function areaOf({ frames }: Sample): string {
  for (const { sym } of frames) {
    const ours = /file:\/\/\S*\/dist\/([^/\s]+\/[^/\s]+)\//.exec(sym) ?? /file:\/\/\S*\/dist\/([^/\s]+)\//.exec(sym);
    if (ours) return ours[1];
    const packaged = /node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\//.exec(sym);
    if (packaged) return `node_modules/${packaged[1]}`;
  }
  const leaf = frames[0];
  if (!leaf) return '(no stack)';
  if (frames.some(({ sym }) => GC.test(sym))) return '(garbage collection)';
  if (leaf.dso.includes('kernel')) return '(kernel, no JS caller)';
  if (frames.some(({ sym }) => sym.startsWith('JS:') && sym.includes('node:'))) return '(node internals)';
  return '(other native)';
}

/** Our function or package frame a sample is charged to, for the top list. */
function functionOf({ frames }: Sample): string {
  for (const { sym } of frames) {
    if (/\/dist\/|node_modules\//.test(sym))
      return sym
        .replace(/^JS:[*~^]?/, '')
        .replace(/file:\/\/\S*\/dist\//, '')
        .replace(/\S*node_modules\//, '');
  }
  return frames[0]?.sym ?? '(no stack)';
}

function table(title: string, counts: Map<string, number>, total: number, perSample: number, top: number): void {
  console.log(title);
  console.log(`${'area'.padEnd(58)} ${'samples'.padStart(8)} ${'%'.padStart(6)} ${'µs/envelope'.padStart(12)}`);
  const rows = [...counts].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, count] of rows) {
    const us = perSample > 0 ? (count * perSample).toFixed(2) : '';
    console.log(
      `${name.slice(0, 58).padEnd(58)} ${String(count).padStart(8)} ${((100 * count) / total).toFixed(1).padStart(6)} ${us.padStart(12)}`,
    );
  }
}

export function summarisePerf(text: string, edgeUs: number, top: number): void {
  const samples = parsePerfScript(text);
  if (samples.length === 0) {
    console.log('edge perf: no samples');
    return;
  }
  const kinds = threadKinds(samples);
  // Every sample is the same slice of CPU: the edge's measured µs per envelope shares them out.
  const perSample = edgeUs > 0 ? edgeUs / samples.length : 0;
  const byThread = new Map<string, number>();
  const byArea = new Map<string, Map<string, number>>();
  const byFunction = new Map<string, number>();
  for (const sample of samples) {
    const kind = kinds.get(sample.tid) ?? 'V8 helpers (GC)';
    byThread.set(kind, (byThread.get(kind) ?? 0) + 1);
    const areas = byArea.get(kind) ?? new Map<string, number>();
    byArea.set(kind, areas);
    const area = areaOf(sample);
    areas.set(area, (areas.get(area) ?? 0) + 1);
    const fn = `${functionOf(sample)}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  }
  console.log(
    `== edge CPU by perf: ${samples.length} samples over ${kinds.size} threads${edgeUs > 0 ? `, ${edgeUs} µs per envelope in all` : ''}`,
  );
  table('-- by thread', byThread, samples.length, perSample, top);
  for (const [kind, areas] of [...byArea].sort((a, b) => (byThread.get(b[0]) ?? 0) - (byThread.get(a[0]) ?? 0))) {
    table(`-- ${kind}: by area (innermost frame of our code or a package)`, areas, samples.length, perSample, top);
  }
  table('-- top functions (innermost frame of our code or a package; else the native leaf)', byFunction, samples.length, perSample, top);
}

/** Exit code of a command (its output to `into`, else discarded); -1 when it cannot be run. */
function run(command: string, args: string[], into?: string): Promise<number> {
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: ['ignore', into ? 'pipe' : 'ignore', 'ignore'] });
    if (into) child.stdout?.pipe(createWriteStream(into));
    child.once('error', () => done(-1));
    child.once('close', (code) => done(code ?? -1));
  });
}

/**
 * Samples process `pid` (all its threads, with call stacks) for `seconds` with `perf record`,
 * then writes `perf script` of it to DIR/edge.perf.script: its path, or null when perf is missing
 * or not allowed (perf_event_paranoid) here.
 */
export async function recordEdgePerf(pid: number, seconds: number, dir: string): Promise<string | null> {
  const data = resolve(dir, 'edge.perf.data');
  const recorded = await run('perf', ['record', '-F', '499', '-g', '-p', String(pid), '-o', data, '--', 'sleep', String(seconds)]);
  if (recorded !== 0) return null;
  const script = resolve(dir, 'edge.perf.script');
  return (await run('perf', ['script', '-i', data, '-F', 'tid,ip,sym,dso'], script)) === 0 ? script : null;
}

if (process.argv[1]?.endsWith('edge-perf.js')) {
  const [file, ...rest] = process.argv.slice(2);
  const args = parseArgs(rest);
  if (!file?.endsWith('.script')) throw new Error('usage: node dist/bench/edge-perf.js DIR/edge.perf.script [--edge-us X] [--top N]');
  summarisePerf(readFileSync(file, 'utf8'), Number(args.get('edge-us') ?? 0), Number(args.get('top') ?? 20));
}
