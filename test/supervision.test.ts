import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './helpers/ports.js';
import { waitFor } from './helpers/wait.js';

// `npm start` (scripts/start.mjs, run directly: npm start only builds first) supervises the three
// processes: one that dies is restarted while the other two keep serving, and everything stops
// on Ctrl-C or when a process cannot start at all. The supervisor runs against the test stores
// (vitest's env) on free ports.
const NAMES = ['ingest', 'management', 'analyzer'] as const;
type Name = (typeof NAMES)[number];
const PORT_VARS: Record<Name, string> = { ingest: 'INGEST_PORT', management: 'MANAGEMENT_PORT', analyzer: 'ANALYZER_PORT' };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function healthz(port: number): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return -1;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface Supervisor {
  child: ChildProcess;
  output: () => string;
  /** Pids of every start of that process, in order, from the `[name] started (pid N)` lines. */
  pids: (name: Name) => number[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const supervisors: Supervisor[] = [];
afterEach(async () => {
  // A failed test must not leave processes behind.
  for (const supervisor of supervisors.splice(0)) {
    if (supervisor.child.exitCode === null && supervisor.child.signalCode === null) supervisor.child.kill('SIGTERM');
    await Promise.race([supervisor.exited, sleep(15_000)]);
    for (const name of NAMES) for (const pid of supervisor.pids(name)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});

function startSupervisor(env: Record<string, string>): Supervisor {
  const child = spawn(process.execPath, ['scripts/start.mjs'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk) => (text += chunk));
  child.stderr!.on('data', (chunk) => (text += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  const supervisor: Supervisor = {
    child,
    output: () => text,
    pids: (name) => [...text.matchAll(new RegExp(`^\\[${name}\\] started \\(pid (\\d+)\\)$`, 'gm'))].map((match) => Number(match[1])),
    exited,
  };
  supervisors.push(supervisor);
  return supervisor;
}

async function ports(): Promise<Record<Name, number>> {
  return { ingest: await freePort(), management: await freePort(), analyzer: await freePort() };
}

const portEnv = (port: Record<Name, number>) => Object.fromEntries(NAMES.map((name) => [PORT_VARS[name], String(port[name])]));

describe('npm start supervision', () => {
  it('restarts each process that dies while the other two keep serving, and stops everything on Ctrl-C', async () => {
    const port = await ports();
    const supervisor = startSupervisor(portEnv(port));
    for (const name of NAMES) {
      await waitFor(
        async () => (supervisor.pids(name).length === 1 && (await healthz(port[name])) === 200 ? true : undefined),
        60_000,
        `${name} to serve`,
      );
    }

    for (const victim of NAMES) {
      const others = NAMES.filter((name) => name !== victim);
      const oldPid = supervisor.pids(victim).at(-1)!;
      const otherPids = others.map((name) => supervisor.pids(name));

      // Poll the other two every ~75 ms from before the kill until the victim serves again.
      let polling = true;
      const polls: Array<{ name: Name; status: number }> = [];
      const poller = (async () => {
        while (polling) {
          for (const name of others) polls.push({ name, status: await healthz(port[name]) });
          await sleep(75);
        }
      })();

      await sleep(300);
      process.kill(oldPid, 'SIGKILL');
      const newPid = await waitFor(() => supervisor.pids(victim).find((pid) => pid !== oldPid), 60_000, `${victim} to be restarted`);
      await waitFor(async () => ((await healthz(port[victim])) === 200 ? true : undefined), 60_000, `${victim} to serve again`);
      await sleep(300);
      polling = false;
      await poller;

      expect(alive(oldPid)).toBe(false);
      expect(alive(newPid)).toBe(true);
      expect(supervisor.pids(victim)).toEqual([oldPid, newPid]);
      expect(supervisor.output()).toMatch(new RegExp(`^\\[${victim}\\] exited \\(SIGKILL\\); restarting in \\d+\\.\\d s$`, 'm'));
      // The other two never stopped: every poll answered 200 and neither was restarted.
      expect(polls.length).toBeGreaterThanOrEqual(10);
      expect(polls.filter((poll) => poll.status !== 200)).toEqual([]);
      expect(others.map((name) => supervisor.pids(name))).toEqual(otherPids);
      for (const pids of otherPids) expect(alive(pids.at(-1)!)).toBe(true);
    }

    const all = NAMES.flatMap((name) => supervisor.pids(name));
    expect(all).toHaveLength(6);
    supervisor.child.kill('SIGINT');
    expect(await supervisor.exited).toEqual({ code: 0, signal: null });
    for (const pid of all) expect(alive(pid)).toBe(false);
    expect(supervisor.output()).not.toMatch(/cannot start/);
    // The next step is said once, when all three first serve, not again after each restart.
    expect(supervisor.output().match(/^all three processes are ready/gm)).toHaveLength(1);
  }, 180_000);

  it("prints each process's ready line with its URL, then the next step once all three serve", async () => {
    const port = await ports();
    const supervisor = startSupervisor(portEnv(port));
    await waitFor(
      () => (/^ {2}npm run --silent admin -- bootstrap/m.test(supervisor.output()) ? true : undefined),
      60_000,
      'the next step',
    );
    const output = supervisor.output();
    const title: Record<Name, string> = { ingest: 'ingest edge', management: 'management plane', analyzer: 'analyzer' };
    const nextStep = output.indexOf('all three processes are ready; Ctrl-C stops them. Next, in another terminal:\n  npm run demo');
    expect(nextStep).toBeGreaterThan(-1);
    for (const name of NAMES) {
      const ready = output.indexOf(`[${name}] ${title[name]} ready at http://127.0.0.1:${port[name]}\n`);
      expect(ready).toBeGreaterThan(-1);
      expect(ready).toBeLessThan(nextStep);
    }
    supervisor.child.kill('SIGINT');
    expect(await supervisor.exited).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('stops everything with a non-zero exit when a process exits before it ever served', async () => {
    const port = await ports();
    // A Redis that does not exist (a closed loopback port): every process needs Redis to start
    // and exits; the migrations before them do not. (Nothing here may make a process reach for an
    // address off this machine.)
    const supervisor = startSupervisor({ ...portEnv(port), REDIS_URL: 'redis://127.0.0.1:1/1' });
    const { code } = await supervisor.exited;
    expect(code).toBe(1);
    expect(supervisor.output()).toMatch(
      /^\[(ingest|management|analyzer)\] cannot start: exited \(code \d+\) before it answered \/healthz on its first start; stopping everything$/m,
    );
    for (const name of NAMES) for (const pid of supervisor.pids(name)) expect(alive(pid)).toBe(false);
  }, 120_000);

  it('refuses to start when a port is already in use, and starts nothing', async () => {
    const port = await ports();
    const taken: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((done) => taken.listen(port.analyzer, '127.0.0.1', done));
    try {
      const supervisor = startSupervisor(portEnv(port));
      const { code } = await supervisor.exited;
      expect(code).toBe(1);
      expect(supervisor.output()).toContain(
        `[analyzer] cannot start: 127.0.0.1:${port.analyzer} is already in use by another process on its first start; stopping everything`,
      );
      expect(supervisor.pids('analyzer')).toEqual([]);
      for (const name of NAMES) for (const pid of supervisor.pids(name)) expect(alive(pid)).toBe(false);
    } finally {
      await new Promise((done) => taken.close(done));
    }
  }, 120_000);
});
