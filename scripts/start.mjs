#!/usr/bin/env node
// `npm start`: brings up the local stores (installing them when missing), applies migrations
// and runs the three processes until Ctrl-C, supervising them: a process that dies is restarted
// while the other two keep serving.
//
// Supervision rules:
// - A start succeeds once the process answers GET /healthz with 200 on its host and port
//   (INGEST_/MANAGEMENT_/ANALYZER_HOST and _PORT; with port 0, once it has stayed up 5 s).
// - A process that exits is restarted after 0.5 s, doubling on each exit up to 10 s; the delay
//   goes back to 0.5 s once a run has lasted 30 s. Every exit and start is logged on stderr:
//   `[ingest] exited (SIGKILL); restarting in 0.5 s`, `[ingest] started (pid 1234)`.
// - A start fails when the process exits before it answered /healthz, does not answer it
//   within 60 s (it is then killed), or finds its port already in use by another process.
//   A process cannot start at all when its first start fails or 5 starts in a row fail:
//   everything is then stopped and `npm start` exits with code 1, saying why.
// - Ctrl-C (SIGINT), SIGTERM or SIGHUP stops every process (SIGTERM, then SIGKILL after 10 s)
//   and exits 0; nothing is restarted while stopping. A second Ctrl-C kills them at once.
//
// Output: each process prints one plain `… ready at http://…` line on stdout (prefixed here with
// `[name]`), its JSON logs and the supervisor's own lines go around it; once all three serve for
// the first time, the next step is printed on stdout, once (not again after a restart).
// First: refuses an unsupported Node (package.json "engines") before anything runs.
import '../dist/shared/supportedNode.js';
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MIN_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 10_000;
const STABLE_RUN_MS = 30_000;
const MAX_FAILED_STARTS = 5;
const START_TIMEOUT_MS = 60_000;
const NO_PORT_HEALTHY_AFTER_MS = 5_000;
const HEALTH_POLL_MS = 200;
const STOP_TIMEOUT_MS = 10_000;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

run('bash', ['scripts/stack.sh', 'up']);
run(process.execPath, ['dist/shared/db/migrate-cli.js']);

/** Where the process listens, as its configuration reads it (shared/config.ts), or null for port 0. */
function addressOf(hostVar, portVar, defaultPort) {
  const port = Number(process.env[portVar] || defaultPort);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return null;
  let host = process.env[hostVar] || '127.0.0.1';
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return { host, port, label: `${host.includes(':') ? `[${host}]` : host}:${port}` };
}

const services = [
  { name: 'ingest', file: 'dist/ingest/main.js', address: addressOf('INGEST_HOST', 'INGEST_PORT', 8080) },
  { name: 'management', file: 'dist/management/main.js', address: addressOf('MANAGEMENT_HOST', 'MANAGEMENT_PORT', 8081) },
  { name: 'analyzer', file: 'dist/analyzer/main.js', address: addressOf('ANALYZER_HOST', 'ANALYZER_PORT', 8082) },
].map((service) => ({
  ...service,
  child: null, // the running process, if any
  exited: null, // resolves when that process has exited
  startedAt: 0,
  healthy: false, // the current run answered /healthz
  everHealthy: false,
  failedStarts: 0, // failed starts in a row
  failReason: null,
  delayMs: MIN_RESTART_DELAY_MS,
  timer: null, // pending restart or health poll
}));

let stopping = false;
let nextStepsShown = false;
const log = (message) => process.stderr.write(`${message}\n`);
const say = (service, message) => log(`[${service.name}] ${message}`);
const describe = (code, signal) => signal ?? `code ${code}`;

/** True when something already accepts connections on the address (another instance, say). */
function portTaken({ host, port }) {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (taken) => {
      socket.destroy();
      done(taken);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

async function answersHealthz({ label }) {
  try {
    const response = await fetch(`http://${label}/healthz`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function start(service) {
  service.timer = null;
  if (stopping) return;
  if (service.address && (await portTaken(service.address))) {
    if (!stopping) failedStart(service, `${service.address.label} is already in use by another process`);
    return;
  }
  if (stopping) return;
  const child = spawn(process.execPath, [service.file], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: Ctrl-C in the terminal reaches only the supervisor, which stops
    // the processes itself instead of seeing them exit and restarting them.
    detached: true,
  });
  let exit;
  service.exited = new Promise((done) => (exit = done));
  child.once('error', (error) => {
    // Spawning failed (no 'exit' follows).
    if (child.pid !== undefined) return;
    service.child = null;
    exit();
    if (!stopping) failedStart(service, `could not be spawned (${error.message})`);
  });
  if (child.pid === undefined) return;
  service.child = child;
  service.startedAt = Date.now();
  service.healthy = false;
  service.failReason = null;
  say(service, `started (pid ${child.pid})`);
  for (const [stream, out] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (line) out.write(`[${service.name}] ${line}\n`);
    });
  }
  child.once('exit', (code, signal) => {
    exit();
    onExit(service, child, code, signal);
  });
  watchHealth(service, child);
}

function watchHealth(service, child) {
  const current = () => service.child === child && !stopping;
  const becameHealthy = (how) => {
    service.healthy = true;
    service.everHealthy = true;
    service.failedStarts = 0;
    say(service, `serving (pid ${child.pid}, ${how})`);
    if (!nextStepsShown && services.every((other) => other.everHealthy)) {
      nextStepsShown = true;
      process.stdout.write(nextSteps());
    }
  };
  if (!service.address) {
    service.timer = setTimeout(() => current() && becameHealthy(`up for ${NO_PORT_HEALTHY_AFTER_MS / 1000} s`), NO_PORT_HEALTHY_AFTER_MS);
    return;
  }
  const deadline = Date.now() + START_TIMEOUT_MS;
  const poll = async () => {
    service.timer = null;
    if (!current()) return;
    const ok = await answersHealthz(service.address);
    if (!current()) return;
    if (ok) return becameHealthy(`http://${service.address.label}/healthz answers 200`);
    if (Date.now() > deadline) {
      service.failReason = `did not answer /healthz within ${START_TIMEOUT_MS / 1000} s`;
      say(service, `${service.failReason}; killing it`);
      child.kill('SIGKILL');
      return;
    }
    service.timer = setTimeout(poll, HEALTH_POLL_MS);
  };
  poll();
}

/** What to do once everything serves: the demo, or a workspace of one's own. */
function nextSteps() {
  return [
    'all three processes are ready; Ctrl-C stops them. Next, in another terminal:',
    '  npm run demo   (a vendor API drifts under an instrumented app; the analyzer opens incidents)',
    '  npm run --silent admin -- bootstrap --email you@example.com --json   (your own workspace and API key; README "First steps")',
    '',
  ].join('\n');
}

function onExit(service, child, code, signal) {
  if (service.child !== child) return;
  service.child = null;
  clearTimeout(service.timer);
  service.timer = null;
  const how = describe(code, signal);
  if (stopping) return say(service, `exited (${how})`);
  if (!service.healthy) {
    return failedStart(service, service.failReason ?? `exited (${how}) before it answered /healthz`);
  }
  if (Date.now() - service.startedAt >= STABLE_RUN_MS) service.delayMs = MIN_RESTART_DELAY_MS;
  scheduleRestart(service, `exited (${how})`);
}

function failedStart(service, reason) {
  service.failedStarts += 1;
  if (!service.everHealthy) {
    say(service, `cannot start: ${reason} on its first start; stopping everything`);
    return stop(1);
  }
  if (service.failedStarts >= MAX_FAILED_STARTS) {
    say(service, `cannot start: ${reason}, ${service.failedStarts} starts in a row failed; stopping everything`);
    return stop(1);
  }
  scheduleRestart(service, `${reason} (failed start ${service.failedStarts} of ${MAX_FAILED_STARTS} in a row)`);
}

function scheduleRestart(service, what) {
  const delay = service.delayMs;
  service.delayMs = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
  say(service, `${what}; restarting in ${(delay / 1000).toFixed(1)} s`);
  service.timer = setTimeout(() => start(service), delay);
}

function stop(code, signal) {
  if (stopping) return;
  stopping = true;
  for (const service of services) {
    clearTimeout(service.timer);
    service.timer = null;
  }
  const running = services.filter((service) => service.child);
  log(`${signal ? `${signal}: ` : ''}stopping ${running.map((service) => service.name).join(', ') || 'nothing'}`);
  for (const service of running) service.child.kill('SIGTERM');
  const force = setTimeout(() => killAll(`did not stop within ${STOP_TIMEOUT_MS / 1000} s`), STOP_TIMEOUT_MS);
  Promise.all(running.map((service) => service.exited)).then(() => {
    clearTimeout(force);
    process.exit(code);
  });
}

function killAll(why) {
  for (const service of services) {
    if (!service.child) continue;
    say(service, `${why}; sending SIGKILL`);
    service.child.kill('SIGKILL');
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => (stopping ? killAll(`${signal} again`) : stop(0, signal)));
}
for (const service of services) start(service);
