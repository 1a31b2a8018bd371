// The Node versions this project runs on are the root package.json's `engines.node` (one source
// of truth: npm warns with EBADENGINE on the same range). Every process checks it first, so that
// an older Node fails with one clear line instead of an obscure error from a dependency.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const PACKAGE_NAME = 'integration-watch';

/** `engines.node` of the project's package.json, found from this file (source or dist/). */
export function enginesRange(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; engines?: { node?: string } };
      if (manifest.name === PACKAGE_NAME && manifest.engines?.node) return manifest.engines.node;
    }
    if (dirname(dir) === dir) throw new Error(`${PACKAGE_NAME}: package.json with engines.node not found above ${from}`);
  }
}

/** The one-line refusal for a Node outside `range`, or null when `version` is supported. */
export function unsupportedNodeMessage(version: string, range: string): string | null {
  if (semver.satisfies(version, range)) return null;
  return `${PACKAGE_NAME} needs Node ${range} (package.json "engines"); this is Node ${version.replace(/^v/, '')}. Install a supported Node and run again.`;
}

/** Exits the process with code 1 and the refusal on stderr when this Node is not supported. */
export function exitUnlessSupportedNode(): void {
  const message = unsupportedNodeMessage(process.version, enginesRange());
  if (message === null) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
