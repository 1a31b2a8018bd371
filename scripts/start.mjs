#!/usr/bin/env node
// `npm start`: brings up the local stores (installing them when missing), applies migrations
// and runs the three processes until Ctrl-C. Any process that dies stops the others.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

run('bash', ['scripts/stack.sh', 'up']);
run(process.execPath, ['dist/shared/db/migrate-cli.js']);

const processes = [
  ['ingest', 'dist/ingest/main.js'],
  ['management', 'dist/management/main.js'],
  ['analyzer', 'dist/analyzer/main.js'],
];
const children = processes.map(([name, file]) => {
  const child = spawn(process.execPath, [file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = (stream, out) => stream.on('data', (chunk) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) out.write(`[${name}] ${line}\n`);
  });
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(`[${name}] exited (${signal ?? code}); stopping the others\n`);
    stop(1);
  });
  return child;
});

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((child) => new Promise((done) => (child.exitCode !== null ? done() : child.on('exit', done)))))
    .then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
