// Idempotency keys that survive a lost answer. Before a keyed write is sent, its key is saved in
// the config directory under the fingerprint of (profile, base URL, request); the same command run
// again while the key is pending finds it and sends it again, so the service replays the original
// result instead of doing the work twice. A definite answer of the service settles the key
// (context.ts decides which answers are definite). One small file per pending request, created
// exclusively, so concurrent commands never overwrite each other's keys.

import { createHash, randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configDir } from '../config.js';
import type { Profile } from '../context.js';

/** A pending key older than this is dropped: by then the login that made it has long been refreshed away. */
const PENDING_TTL_MS = 30 * 24 * 3600 * 1000;

interface PendingKey {
  key: string;
  profile: string;
  createdAt: string;
}

async function pendingDir(): Promise<string> {
  return join(await configDir(), 'pending');
}

/** Keys are plain JSON of sorted members, so the same request always has the same fingerprint. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function requestFingerprint(profile: Profile, request: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical({ profile: profile.name, baseUrl: profile.baseUrl, request })))
    .digest('hex');
}

/** key → its file, for `settled` in the same process. */
const filesByKey = new Map<string, string>();

export async function idempotencyKey(profile: Profile, request: unknown): Promise<string> {
  const dir = await pendingDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${requestFingerprint(profile, request)}.json`);
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await readPending(path);
    if (existing && Date.now() - Date.parse(existing.createdAt) < PENDING_TTL_MS) {
      filesByKey.set(existing.key, path);
      return existing.key;
    }
    if (existing) await rm(path, { force: true });
    const pending: PendingKey = { key: `iw-${randomUUID()}`, profile: profile.name, createdAt: new Date().toISOString() };
    // Written whole beside it, then linked into place: the link fails when the file exists, so
    // the first of two concurrent commands wins and no reader ever sees a partial file.
    const temporary = `${path}.${process.pid}.${pending.key}.tmp`;
    await writeFile(temporary, `${JSON.stringify(pending)}\n`, { mode: 0o600, flag: 'wx' });
    try {
      await link(temporary, path);
      filesByKey.set(pending.key, path);
      return pending.key;
    } catch (error) {
      // Another command of the same request saved its key first: use that one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await rm(temporary, { force: true });
    }
  }
  throw new Error(`cannot save the idempotency key in ${path}`);
}

export async function settled(profile: Profile, key: string): Promise<void> {
  const known = filesByKey.get(key);
  if (known !== undefined) {
    filesByKey.delete(key);
    await rm(known, { force: true });
    return;
  }
  const dir = await pendingDir();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (!name.endsWith('.json')) continue;
    const pending = await readPending(path);
    if (pending?.key === key && pending.profile === profile.name) await rm(path, { force: true });
  }
}

async function readPending(path: string): Promise<PendingKey | undefined> {
  try {
    const pending = JSON.parse(await readFile(path, 'utf8')) as PendingKey;
    if (typeof pending.key === 'string' && typeof pending.createdAt === 'string') return pending;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  }
  // Not a key of ours (files are linked into place whole): drop it.
  await rm(path, { force: true });
  return undefined;
}
