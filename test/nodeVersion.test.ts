import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { enginesRange, unsupportedNodeMessage } from '../shared/nodeVersion.js';

// Issue 26 item 4: package.json's `engines` is true. Every installed dependency supports every
// Node it promises (so `npm ci` prints no EBADENGINE), and every process refuses an older Node
// with one clear line before it loads anything else.

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const range = manifest.engines.node;

describe('engines', () => {
  it('is the range the processes check, and every installed package supports all of it', () => {
    expect(enginesRange()).toBe(range);
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } | string[] }>;
    };
    const narrower = Object.entries(lock.packages)
      // What npm installed here: its engine check (EBADENGINE) covers these; other platforms'
      // optional binaries are not installed.
      .filter(([path, entry]) => path !== '' && existsSync(join(root, path)) && !Array.isArray(entry.engines) && entry.engines?.node)
      .filter(([, entry]) => !semver.subset(range, (entry.engines as { node: string }).node, { loose: true }))
      .map(([path, entry]) => `${path} ${(entry.engines as { node: string }).node}`);
    expect(narrower).toEqual([]);
  });

  it('turns away a Node outside the range with one line naming both versions', () => {
    expect(unsupportedNodeMessage('v20.20.2', range)).toBeNull();
    expect(unsupportedNodeMessage('v22.12.0', range)).toBeNull();
    expect(unsupportedNodeMessage('v24.1.0', range)).toBeNull();
    for (const version of ['v20.11.0', 'v20.18.3', 'v21.7.3', 'v22.11.0', 'v23.11.0', 'v18.20.4']) {
      expect(unsupportedNodeMessage(version, range)).toBe(
        `integration-watch needs Node ${range} (package.json "engines"); this is Node ${version.slice(1)}. Install a supported Node and run again.`,
      );
    }
  });
});

describe('every process checks the Node version first', () => {
  // The process sees an old Node: process.version is replaced before the entry point loads.
  const OLD_NODE = `data:text/javascript,Object.defineProperty(process, 'version', { value: 'v20.11.0' })`;
  const entries = [
    'dist/ingest/main.js',
    'dist/analyzer/main.js',
    'dist/management/main.js',
    'dist/management/admin/cli.js',
    'dist/shared/db/migrate-cli.js',
    'scripts/start.mjs',
  ];
  it.each(entries)('%s exits 1 with the one-line refusal and does nothing else', async (entry) => {
    const outcome = await run(process.execPath, ['--import', OLD_NODE, entry, '--help'], {
      cwd: root,
      // Stores nobody listens on: a process that went on would fail differently, never touch ours.
      env: {
        ...process.env,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        REDIS_URL: 'redis://127.0.0.1:1',
        CLICKHOUSE_URL: 'http://127.0.0.1:1',
      },
      timeout: 20_000,
    }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toBe(`${unsupportedNodeMessage('v20.11.0', range)}\n`);
  });
});
