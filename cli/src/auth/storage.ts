// Where a profile's login keeps its tokens: the OS keychain (@napi-rs/keyring: macOS Keychain,
// Windows Credential Manager, the Secret Service on Linux), or, only when asked with
// `--insecure-storage`, a file of the config directory readable by its owner only (0600), written
// atomically. The keyring binding is loaded only when a keychain login is read or written.

import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { configDir, type TokenStorage, writeFileAtomic } from '../config.js';
import { CliError, EXIT } from '../errors.js';

/** What a login leaves behind (never printed; the service never returns it again). */
export interface StoredLogin {
  /** The base URL the tokens were issued by; they are sent nowhere else. */
  baseUrl: string;
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires, in ms since the epoch (local clock, from `expires_in`). */
  expiresAt: number;
  scope: string;
}

export interface TokenStore {
  readonly kind: TokenStorage;
  /** Human words for where the tokens are, for messages. */
  readonly location: string;
  read(): Promise<StoredLogin | undefined>;
  write(login: StoredLogin): Promise<void>;
  /** Forgets the login; true when there was one. */
  clear(): Promise<boolean>;
}

const KEYCHAIN_SERVICE = 'integration-watch-cli';

export async function tokenStore(kind: TokenStorage, profile: string): Promise<TokenStore> {
  return kind === 'file' ? fileStore(profile) : keychainStore(profile);
}

/** The directory of file logins and of the refresh locks. */
export async function tokensDir(): Promise<string> {
  return join(await configDir(), 'tokens');
}

async function fileStore(profile: string): Promise<TokenStore> {
  const path = join(await tokensDir(), `${profile}.json`);
  return {
    kind: 'file',
    location: path,
    async read() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      return parseLogin(text, path);
    },
    async write(login) {
      await writeFileAtomic(path, `${JSON.stringify(login)}\n`, 0o600);
    },
    async clear() {
      try {
        await rm(path);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },
  };
}

interface KeyringEntry {
  getPassword(): string | null;
  setPassword(password: string): void;
  deletePassword(): boolean;
}

async function keychainStore(profile: string): Promise<TokenStore> {
  let entry: KeyringEntry | undefined;
  const open = async (): Promise<KeyringEntry> => {
    if (entry) return entry;
    try {
      const { Entry } = await import('@napi-rs/keyring');
      // On Linux only the Secret Service persists; the binding's silent fallback to the kernel
      // keyring would lose the login with the session, so it is never taken.
      entry = new Entry(KEYCHAIN_SERVICE, profile, { linux: { store: 'secret-service' } }) as KeyringEntry;
      return entry;
    } catch (error) {
      throw keychainUnavailable(error);
    }
  };
  const call = async <T>(action: (entry: KeyringEntry) => T): Promise<T> => {
    const opened = await open();
    try {
      return action(opened);
    } catch (error) {
      throw keychainUnavailable(error);
    }
  };
  return {
    kind: 'keychain',
    location: `the OS keychain (service "${KEYCHAIN_SERVICE}", account "${profile}")`,
    async read() {
      const text = await call((e) => e.getPassword());
      return text === null ? undefined : parseLogin(text, 'the OS keychain');
    },
    async write(login) {
      await call((e) => e.setPassword(JSON.stringify(login)));
    },
    async clear() {
      return call((e) => e.deletePassword());
    },
  };
}

/** Fails with a message naming `--insecure-storage`, the explicit way around a missing keychain. */
export function keychainUnavailable(cause: unknown): CliError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new CliError(
    `the OS keychain is not available (${reason}). To keep the tokens in a file readable only by you instead, run \`iw login --insecure-storage\``,
  );
}

function parseLogin(text: string, where: string): StoredLogin {
  try {
    const login = JSON.parse(text) as StoredLogin;
    if (typeof login.accessToken === 'string' && typeof login.baseUrl === 'string' && typeof login.expiresAt === 'number') return login;
  } catch {
    // fall through
  }
  throw new CliError(`the stored login in ${where} is damaged: run \`iw login\``, EXIT.authentication);
}
