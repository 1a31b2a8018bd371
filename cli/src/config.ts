// Profiles: one per deployment the CLI talks to (its base URL, the workspace `iw use` saved, where
// its login keeps its tokens), in `config.json` of the platform's config directory (env-paths:
// ~/.config/iw on Linux, ~/Library/Preferences/iw on macOS, %APPDATA%\iw\Config on Windows), or of
// IW_CONFIG_DIR when set. Every file the CLI writes there is written whole to a temporary file and
// renamed over the old one, so a reader never sees half of it.

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Profile } from './context.js';
import { CliError } from './errors.js';

export const DEFAULT_PROFILE = 'default';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8081';

/** Where a profile's login keeps its tokens: the OS keychain, or a 0600 file (`--insecure-storage`). */
export type TokenStorage = 'keychain' | 'file';

/** A profile as config.json records it. */
export interface ProfileRecord {
  baseUrl: string;
  workspace?: string;
  /** Set by `iw login`; absent until the profile has logged in once. */
  storage?: TokenStorage;
}

export interface ConfigFile {
  profiles: Record<string, ProfileRecord>;
}

let resolvedDir: string | undefined;

/** IW_CONFIG_DIR, else the platform's config directory for `iw`. */
export async function configDir(): Promise<string> {
  if (resolvedDir !== undefined) return resolvedDir;
  const fromEnv = process.env.IW_CONFIG_DIR;
  if (fromEnv !== undefined && fromEnv !== '') {
    resolvedDir = fromEnv;
  } else {
    const { default: envPaths } = await import('env-paths');
    resolvedDir = envPaths('iw', { suffix: '' }).config;
  }
  return resolvedDir;
}

export async function configPath(): Promise<string> {
  return join(await configDir(), 'config.json');
}

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `--profile`, IW_PROFILE, else "default"; a name that could not be a file name is refused. */
export function profileName(name: string | undefined): string {
  const chosen = name === undefined || name === '' ? DEFAULT_PROFILE : name;
  if (!PROFILE_NAME.test(chosen)) {
    throw new CliError(`invalid profile name "${chosen}": use letters, digits, ".", "_" and "-" (at most 64)`);
  }
  return chosen;
}

/** A base URL as the CLI keeps it: an http(s) origin plus an optional path, without a trailing slash. */
export function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`invalid base URL "${value}": give one like https://watch.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CliError(`invalid base URL "${value}": it must be http(s)`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new CliError(`invalid base URL "${value}": no credentials, query or fragment`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export async function readConfig(): Promise<ConfigFile> {
  const path = await configPath();
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { profiles: parsed.profiles && typeof parsed.profiles === 'object' ? parsed.profiles : {} };
  } catch {
    throw new CliError(`${path} is not valid JSON: correct it or remove it (it holds the profiles: base URLs and saved workspaces)`);
  }
}

/** Reads config.json, lets `change` edit it, and writes it back (atomically). */
export async function updateConfig(change: (config: ConfigFile) => void): Promise<ConfigFile> {
  const config = await readConfig();
  change(config);
  await writeFileAtomic(await configPath(), `${JSON.stringify(config, null, 2)}\n`, 0o600);
  return config;
}

/**
 * The profile `name` as commands use it. IW_BASE_URL, when set, overrides the saved base URL for
 * this command (a login is only ever used against the base URL it was made with: tokenSource.ts).
 */
export async function loadProfile(name: string | undefined): Promise<Profile & { storage?: TokenStorage }> {
  const chosen = profileName(name);
  const record = (await readConfig()).profiles[chosen];
  const fromEnv = process.env.IW_BASE_URL;
  const baseUrl = fromEnv !== undefined && fromEnv !== '' ? normalizeBaseUrl(fromEnv) : (record?.baseUrl ?? DEFAULT_BASE_URL);
  return {
    name: chosen,
    baseUrl,
    ...(record?.workspace !== undefined ? { workspace: record.workspace } : {}),
    ...(record?.storage !== undefined ? { storage: record.storage } : {}),
  };
}

/** Writes `content` to a temporary file beside `path` with `mode`, then renames it over `path`. */
export async function writeFileAtomic(path: string, content: string, mode: number): Promise<void> {
  const dir = join(path, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { mode, flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
