// What every command works with: the global options, the profile (its base URL, login and saved
// workspace), the output, and an API client that is built only when the command calls the API
// (so `--help` and local commands load nothing else).

import type { Command } from 'commander';
import { type ApiClient, ApiError } from './api.js';
import { CliError, EXIT } from './errors.js';
import { createOutput, type Output } from './output.js';

/** Options every command accepts (program.ts declares them on the root). */
export interface GlobalOptions {
  profile?: string;
  workspace?: string;
  json?: boolean;
}

/** One deployment the CLI talks to (config.ts keeps them in the platform's config directory). */
export interface Profile {
  name: string;
  baseUrl: string;
  /** The workspace `iw use` saved for this profile. */
  workspace?: string;
}

/** Implemented by the profile store and the login (auth/): what a command needs of them. */
export interface Session {
  profile(name: string | undefined): Promise<Profile>;
  saveWorkspace(profile: Profile, slug: string): Promise<void>;
  /** An API client of the profile's login; exit 4 with "iw login" when there is none or it expired. */
  api(profile: Profile): Promise<ApiClient>;
  /**
   * The Idempotency-Key of a keyed write: the key saved for an identical request that did not
   * get its answer (so a retry replays the original operation), else a new one saved until
   * `settled` is called with it.
   */
  idempotencyKey(profile: Profile, request: unknown): Promise<string>;
  settled(profile: Profile, key: string): Promise<void>;
}

export interface CommandContext {
  options: GlobalOptions;
  output: Output;
  profile(): Promise<Profile>;
  api(): Promise<ApiClient>;
  /** `--workspace`, then `IW_WORKSPACE`, then the profile's saved one; else a CliError saying how to choose. */
  workspace(): Promise<string>;
  /** Saves `slug` as the profile's workspace (`iw use`), through the session's `saveWorkspace`. */
  saveWorkspace(slug: string): Promise<void>;
  /**
   * Runs one keyed write with an Idempotency-Key that survives a lost answer: the same request
   * run again reuses it (the service then replays the original result).
   */
  keyed<T>(request: unknown, send: (idempotencyKey: string) => Promise<T>): Promise<T>;
}

/**
 * Whether a failed keyed write settles its key: a definite answer of the service does (the
 * operation happened or never will with this request: 4xx other than 429). A network failure, an
 * answer that is not the service's JSON, a 5xx or a 429 (nothing done, "retry the same request
 * and key": 03 CLI API errors) keeps the key for the retry. A 401 settles it: the request was
 * not authorized, and after `iw login` the new login's client could not claim the old key anyway.
 */
export function settlesKey(error: unknown): boolean {
  return error instanceof ApiError && error.status < 500 && error.status !== 429;
}

let session: Session | undefined;

/** Set once by main.ts: the profile store and token handling the commands use. */
export function useSession(value: Session): void {
  session = value;
}

function currentSession(): Session {
  if (!session) throw new Error('main.ts did not set the session');
  return session;
}

/** The context of a command's action (commander's `this` or the command object). */
export function contextOf(command: Command): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const output = createOutput(options.json === true);
  let profile: Promise<Profile> | undefined;
  const loadProfile = () => {
    profile ??= currentSession().profile(options.profile ?? process.env.IW_PROFILE);
    return profile;
  };
  return {
    options,
    output,
    profile: loadProfile,
    async api() {
      return currentSession().api(await loadProfile());
    },
    async workspace() {
      const slug = options.workspace ?? process.env.IW_WORKSPACE ?? (await loadProfile()).workspace;
      if (!slug) throw new CliError('no workspace chosen: run `iw use <slug>`, or pass --workspace or set IW_WORKSPACE', EXIT.failure);
      return slug;
    },
    async saveWorkspace(slug) {
      await currentSession().saveWorkspace(await loadProfile(), slug);
    },
    async keyed(request, send) {
      const current = await loadProfile();
      const key = await currentSession().idempotencyKey(current, request);
      let result: Awaited<ReturnType<typeof send>>;
      try {
        result = await send(key);
      } catch (error) {
        if (settlesKey(error)) await currentSession().settled(current, key);
        throw error;
      }
      await currentSession().settled(current, key);
      return result;
    },
  };
}
