import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The ingest edge's folders import in one direction (README "Architecture"): the entry, then the
// HTTP adapters, the pipeline (request flow and composition root), the stages, what the stages
// share, and the mechanisms below them all. A stage never imports another stage: what two
// stages need lives below both. Every folder may import shared/.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const INGEST = join(ROOT, 'ingest');

/** Rank of each part of ingest/: an import must go to a higher rank, or stay in its own folder. */
const LAYERS: Record<string, number> = {
  'main.ts': 0,
  http: 1,
  pipeline: 2,
  auth: 3,
  check: 3,
  admission: 3,
  log: 3,
  contract: 3,
  common: 4,
  offload: 5,
};

/** The part of ingest/ a path is in (its first folder, or the file itself at the top), else null. */
function partOf(path: string): string | null {
  const inside = relative(INGEST, path);
  if (inside.startsWith('..')) return null;
  return inside.split('/')[0];
}

/** What is wrong with an import from `from` (a file of ingest/) of `to` (a resolved path), or null. */
function layerViolation(from: string, to: string): string | null {
  const source = partOf(from)!;
  if (!(source in LAYERS)) return `${relative(ROOT, from)} is in no layer of ingest/`;
  const target = partOf(to);
  if (target === null) {
    const top = relative(ROOT, to).split('/')[0];
    return top === 'shared' || top === 'node_modules'
      ? null
      : `${relative(ROOT, from)} imports ${relative(ROOT, to)}, outside ingest/ and shared/`;
  }
  if (target === source) return null;
  if (!(target in LAYERS)) return `${relative(ROOT, from)} imports ${relative(ROOT, to)}, in no layer of ingest/`;
  return LAYERS[target] > LAYERS[source] ? null : `${relative(ROOT, from)} imports ${relative(ROOT, to)} against the direction of ingest/`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative imports of a file, type-only ones included, resolved to .ts paths. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')));
}

describe('ingest/ layering', () => {
  it('has no import against the direction entry → http → pipeline → stages → common → offload', () => {
    const files = sourceFiles(INGEST);
    expect(files.length).toBeGreaterThan(30);
    const violations = files.flatMap((file) =>
      importsOf(file)
        .map((target) => layerViolation(file, target))
        .filter((violation) => violation !== null),
    );
    expect(violations).toEqual([]);
  });

  it('catches a back edge, a stage importing another, and a file outside the layers', () => {
    const at = (path: string) => join(INGEST, path);
    expect(layerViolation(at('offload/threadPool.ts'), at('check/checkBatch.ts'))).toMatch(/against the direction/);
    expect(layerViolation(at('check/parseItems.ts'), at('http/uwsServer.ts'))).toMatch(/against the direction/);
    expect(layerViolation(at('log/shipper.ts'), at('admission/admission.ts'))).toMatch(/against the direction/);
    expect(layerViolation(at('pipeline.ts'), at('check/checker.ts'))).toMatch(/in no layer/);
    expect(layerViolation(at('check/checker.ts'), join(ROOT, 'management/app.ts'))).toMatch(/outside ingest/);
    expect(layerViolation(at('http/uwsServer.ts'), at('pipeline/compose.ts'))).toBeNull();
    expect(layerViolation(at('check/checker.ts'), join(ROOT, 'shared/config.ts'))).toBeNull();
  });
});
