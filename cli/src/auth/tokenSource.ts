// The access token of a profile's login, refreshed when it expires within a minute and once after
// the service refused it. Refresh tokens rotate on every use and a spent one presented again
// revokes the whole grant (docs/decisions/cli.md), so two iw processes must never both spend the
// same one: a refresh holds a lock in the config directory (proper-lockfile, a directory created
// atomically), and under the lock first reads the stored tokens again — when another process
// refreshed meanwhile, its new access token is used and nothing is spent.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TokenSource } from '../api.js';
import { readConfig, type TokenStorage } from '../config.js';
import type { Profile } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { oauthConfiguration, oauthErrorCode, transportError } from './oauth.js';
import { type StoredLogin, type TokenStore, tokenStore, tokensDir } from './storage.js';

/** Refresh when the access token expires within this much (03 Limits: they last 15 minutes). */
export const REFRESH_MARGIN_MS = 60_000;

export function notLoggedIn(profile: Profile): CliError {
  return new CliError(`not logged in to ${profile.baseUrl} (profile "${profile.name}"): run \`iw login\``, EXIT.authentication);
}

export function loginExpired(profile: Profile): CliError {
  return new CliError(
    `the login of profile "${profile.name}" expired or was revoked: run \`iw login\` to log in again`,
    EXIT.authentication,
  );
}

/** The store of a profile's login, or undefined when it never logged in. */
export async function storeOf(profile: Profile & { storage?: TokenStorage }): Promise<TokenStore | undefined> {
  const storage = profile.storage ?? (await readConfig()).profiles[profile.name]?.storage;
  return storage === undefined ? undefined : tokenStore(storage, profile.name);
}

/** The stored login of the profile, checked to belong to the profile's base URL. */
async function readLogin(profile: Profile, store: TokenStore | undefined): Promise<StoredLogin> {
  const login = await store?.read();
  if (!login) throw notLoggedIn(profile);
  if (login.baseUrl !== profile.baseUrl) {
    throw new CliError(
      `the login of profile "${profile.name}" is for ${login.baseUrl}, not ${profile.baseUrl}: run \`iw login\` (or choose the profile of that deployment with --profile)`,
      EXIT.authentication,
    );
  }
  return login;
}

/** Runs `action` holding the profile's refresh lock (other iw processes wait for it). */
export async function withRefreshLock<T>(profile: Profile, action: () => Promise<T>): Promise<T> {
  const dir = await tokensDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, profile.name);
  const lockfilePath = `${target}.lock`;
  const { default: lockfile } = await import('proper-lockfile');
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, {
      realpath: false,
      lockfilePath,
      stale: 15_000,
      retries: { retries: 60, factor: 1.3, minTimeout: 25, maxTimeout: 500, randomize: true },
      // A holder that stalls past `stale` may lose the lock to another process; that one then
      // re-reads the tokens first, so the worst case is one refused refresh, not a crash here.
      onCompromised: () => {},
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new CliError(
        `another iw command has been refreshing the login of profile "${profile.name}" for too long; if none is running, remove ${lockfilePath}`,
      );
    }
    throw error;
  }
  try {
    return await action();
  } finally {
    await release().catch(() => {});
  }
}

export function createTokenSource(profile: Profile & { storage?: TokenStorage }): TokenSource {
  let store: Promise<TokenStore | undefined> | undefined;
  const currentStore = () => {
    store ??= storeOf(profile);
    return store;
  };

  /** Refreshes unless the stored access token is no longer `stale` (another process refreshed). */
  async function refresh(stale: string): Promise<string> {
    const tokens = await currentStore();
    return withRefreshLock(profile, async () => {
      const login = await readLogin(profile, tokens);
      if (login.accessToken !== stale && login.expiresAt - Date.now() > REFRESH_MARGIN_MS) return login.accessToken;
      if (login.refreshToken === undefined) throw loginExpired(profile);
      const { client, config } = await oauthConfiguration(login.baseUrl);
      let answer: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
      try {
        answer = await client.refreshTokenGrant(config, login.refreshToken);
      } catch (error) {
        const code = oauthErrorCode(error);
        if (code === 'invalid_grant' || code === 'invalid_client') throw loginExpired(profile);
        if (code !== undefined) throw new CliError(`the service refused to refresh the login: ${code}`);
        throw transportError(login.baseUrl, error);
      }
      const next: StoredLogin = {
        baseUrl: login.baseUrl,
        accessToken: answer.access_token,
        ...(answer.refresh_token !== undefined ? { refreshToken: answer.refresh_token } : {}),
        expiresAt: Date.now() + (answer.expires_in ?? 900) * 1000,
        scope: answer.scope ?? login.scope,
      };
      await tokens?.write(next);
      return next.accessToken;
    });
  }

  return {
    async accessToken() {
      const login = await readLogin(profile, await currentStore());
      if (login.expiresAt - Date.now() > REFRESH_MARGIN_MS) return login.accessToken;
      return refresh(login.accessToken);
    },
    refreshAfterRefusal(token) {
      return refresh(token);
    },
  };
}
