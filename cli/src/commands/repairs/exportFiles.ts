// `iw repairs export <dir>`: the bundle's files written into a directory, never over a different
// file unless --force, each one replaced atomically (a temporary file renamed into place), then
// read back and checked against the bundle's SHA-256.

import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError } from '../../errors.js';
import type { Bundle } from './types.js';

export interface WrittenFile {
  name: string;
  path: string;
  sha256: string;
  /** `written` (new), `replaced` (a different file was there; --force), `unchanged` (the same bytes were there). */
  state: 'written' | 'replaced' | 'unchanged';
}

/** A plain file name: no directory part, no leading dot, nothing a shell or another OS would read otherwise. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function readIfPresent(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * Writes `bundle`'s files into `dir` (created if missing) and checks them on disk. Refuses, before
 * writing anything, a file name that is not a plain name and an existing file with other content
 * (unless `force`); after writing, a file whose bytes on disk do not have the bundle's SHA-256
 * fails the command naming it.
 */
export async function writeBundle(dir: string, bundle: Bundle, options: { force: boolean }): Promise<WrittenFile[]> {
  if (!Array.isArray(bundle.files) || bundle.files.length === 0) throw new CliError('the export bundle has no files');
  const seen = new Set<string>();
  for (const file of bundle.files) {
    if (!FILE_NAME.test(file.name) || file.name.includes('..') || seen.has(file.name)) {
      throw new CliError(`the export bundle names a file the CLI will not write: ${JSON.stringify(file.name)}`);
    }
    seen.add(file.name);
  }
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`cannot create the directory ${dir}: ${(error as Error).message}`);
  }

  const plan = await Promise.all(
    bundle.files.map(async (file) => {
      const path = join(dir, file.name);
      const bytes = Buffer.from(file.content, 'utf8');
      const existing = await readIfPresent(path);
      const state: WrittenFile['state'] = existing === null ? 'written' : existing.equals(bytes) ? 'unchanged' : 'replaced';
      return { file, path, bytes, state };
    }),
  );
  const different = plan.filter((entry) => entry.state === 'replaced');
  if (different.length > 0 && !options.force) {
    throw new CliError(
      `refusing to overwrite ${different.map((entry) => entry.path).join(', ')}: ${different.length === 1 ? 'it holds' : 'they hold'} other content (nothing was written; pass --force to replace, or export into another directory)`,
    );
  }

  for (const entry of plan) {
    if (entry.state === 'unchanged') continue;
    const temporary = join(dir, `.${entry.file.name}.${process.pid}.iw-tmp`);
    try {
      await writeFile(temporary, entry.bytes, { mode: 0o644 });
      await rename(temporary, entry.path);
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined);
      throw new CliError(`cannot write ${entry.path}: ${(error as Error).message}`);
    }
  }

  const mismatched: string[] = [];
  for (const entry of plan) {
    const onDisk = await readIfPresent(entry.path);
    const actual = onDisk === null ? 'missing' : sha256(onDisk);
    if (actual !== entry.file.sha256.toLowerCase())
      mismatched.push(`${entry.path} (SHA-256 ${actual}, the bundle says ${entry.file.sha256})`);
  }
  if (mismatched.length > 0) {
    throw new CliError(
      `SHA-256 mismatch after writing: ${mismatched.join('; ')}. Do not use ${mismatched.length === 1 ? 'this file' : 'these files'}; export again.`,
    );
  }

  return plan.map(({ file, path, state }) => ({ name: file.name, path, sha256: file.sha256, state }));
}
