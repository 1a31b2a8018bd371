import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../shared/config.js';

// The built `iw` (cli/bin/iw.js → cli/dist; `npm run build` first) as a user runs it: a process of
// its own, no TTY, NO_COLOR, its configuration in a temporary directory of the test's own.

export const IW_BIN = fileURLToPath(new URL('../../cli/bin/iw.js', import.meta.url));

/** A configuration directory of `iw` and the environment that points the CLI at it. */
export interface IwEnv {
  configDir: string;
  env: Record<string, string>;
}

export interface IwResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The test process's environment without anything that could steer `iw` from outside the test. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith('IW_') || name === 'DISPLAY' || name === 'WAYLAND_DISPLAY') continue;
    env[name] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

const created: string[] = [];

/** A fresh, empty configuration directory (removed by `removeIwEnvs`). */
export async function freshIwEnv(): Promise<IwEnv> {
  const configDir = await mkdtemp(join(tmpdir(), 'iw-test-'));
  created.push(configDir);
  return { configDir, env: { IW_CONFIG_DIR: configDir } };
}

/** Removes every configuration directory `freshIwEnv` and `loginIw` made in this test file (afterAll). */
export async function removeIwEnvs(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * Runs `iw args…` to its exit (killed after `timeoutMs`, 60 s by default, which then fails the
 * call), with `input` on its stdin (closed at once when none).
 */
export function runIw(args: string[], env: IwEnv, options: { input?: string; timeoutMs?: number } = {}): Promise<IwResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [IW_BIN, ...args], {
      env: { ...baseEnv(), ...env.env, IW_CONFIG_DIR: env.configDir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== null) reject(new Error(`iw ${args.join(' ')} was killed (${signal})\nstdout: ${stdout}\nstderr: ${stderr}`));
      else resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The one-time code `iw login` prints on stderr (`XXXX-XXXX`). */
export const USER_CODE = /one-time code: ([A-Z]{4}-[A-Z]{4})/;

/** Approves `userCode` through the consent API, as the user of `sessionToken` would from the page. */
async function approveByApi(baseUrl: string, sessionToken: string, userCode: string): Promise<void> {
  const response = await fetch(`${baseUrl}/oauth/device/consent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: `session=${sessionToken}`, origin: loadConfig(process.env).consoleOrigin },
    body: JSON.stringify({ user_code: userCode, decision: 'approve' }),
  });
  if (response.status !== 200) throw new Error(`consent → ${response.status} ${await response.text()}`);
}

/**
 * Logs `iw` in the way a person does, in a fresh configuration directory: runs the real
 * `iw login --insecure-storage --no-browser` against `baseUrl`, reads the user code it prints,
 * approves it (through the consent API as the user of `sessionToken` — their console session,
 * same-origin `Origin`, as test/helpers/cliLogin.ts does — unless `approve` is given, e.g. the
 * consent page in a browser) and waits for the login to exit 0.
 * `scopes` are scope suffixes (`incidents:read`; all twelve when absent); `profile` is the profile
 * logged in, which the returned environment then selects (IW_PROFILE).
 */
export async function loginIw(
  baseUrl: string,
  sessionToken: string,
  options: {
    scopes?: string[];
    profile?: string;
    env?: IwEnv;
    /** How the printed code is approved; through the consent API as the session's user by default. */
    approve?: (userCode: string) => Promise<void>;
  } = {},
): Promise<IwEnv> {
  const iw = options.env ?? (await freshIwEnv());
  if (options.profile !== undefined) iw.env.IW_PROFILE = options.profile;
  const args = ['login', '--insecure-storage', '--no-browser', '--base-url', baseUrl];
  if (options.scopes !== undefined) args.push('--scopes', options.scopes.join(','));
  const child = spawn(process.execPath, [IW_BIN, ...args], {
    env: { ...baseEnv(), ...iw.env, IW_CONFIG_DIR: iw.configDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code ?? -1));
  });
  const userCode = new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = USER_CODE.exec(stderr);
      if (match) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`iw login exited ${code} before printing a code\nstderr: ${stderr}`)));
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    const code = await userCode;
    await (options.approve ?? ((printed) => approveByApi(baseUrl, sessionToken, printed)))(code);
    const exitCode = await exited;
    if (exitCode !== 0) throw new Error(`iw login exited ${exitCode}\nstdout: ${stdout}\nstderr: ${stderr}`);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return iw;
}
