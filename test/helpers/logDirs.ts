import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Write-ahead log folders of the edges a test starts (INGEST_WAL_DIR: one folder per edge). An
// edge killed with SIGKILL never removes its own, so the folders are kept track of here and
// removed after every test file (test/setupLogDirs.ts).

const made = new Set<string>();

/** A new, empty log folder. */
export function newLogDir(prefix = 'edge-wal-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** The log folder of the edge process on `port`: an edge restarted on that port finds what its predecessor left. */
export function portLogDir(port: number): string {
  const dir = join(tmpdir(), `edge-wal-${process.pid}-${port}`);
  made.add(dir);
  return dir;
}

/** Removes one folder now. */
export function removeLogDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  made.delete(dir);
}

/** Removes every folder made so far. */
export function removeLogDirs(): void {
  for (const dir of made) removeLogDir(dir);
}
