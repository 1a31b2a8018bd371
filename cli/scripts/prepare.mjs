#!/usr/bin/env node
// npm's `prepare` of the CLI package: compiles src/ into dist/ so that `npm install -g ./cli`
// works from a fresh clone. In the repository (the root's `npm install`) TypeScript comes from
// the root's node_modules. Alone (a global install of the folder, which npm links without
// installing the folder's dependencies), it first installs the package's own dependencies and
// its compiler into cli/node_modules, where the linked `iw` then finds them.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(join(root, 'package.json'));

function resolveTsc() {
  try {
    return require.resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

function dependenciesResolve() {
  const { dependencies } = require('./package.json');
  return Object.keys(dependencies).every((name) => {
    try {
      require.resolve(`${name}/package.json`);
      return true;
    } catch {
      try {
        require.resolve(name);
        return true;
      } catch {
        return false;
      }
    }
  });
}

if (resolveTsc() === undefined || !dependenciesResolve()) {
  const npm = process.env.npm_execpath;
  process.stderr.write("iw: installing the CLI's dependencies and TypeScript into cli/node_modules to build it\n");
  const args = ['install', '--no-save', '--no-package-lock', '--include=dev', '--ignore-scripts', '--no-audit', '--no-fund'];
  // This script runs inside `npm install -g`: its settings (global, prefix…) must not reach the
  // nested install, which is a local one in this folder.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_(global|prefix|location)$/i.test(name)));
  const options = { cwd: root, stdio: 'inherit', env: { ...env, npm_config_global: 'false', npm_config_location: 'project' } };
  if (npm) execFileSync(process.execPath, [npm, ...args, '--prefix', root], options);
  else execFileSync('npm', [...args, '--prefix', root], { ...options, shell: process.platform === 'win32' });
}

const tsc = resolveTsc();
if (tsc === undefined) {
  process.stderr.write('iw: TypeScript is not available to build the CLI: run `npm install` at the repository root first\n');
  process.exit(1);
}
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
