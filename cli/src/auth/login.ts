// `iw login`: the OAuth 2.0 device grant (RFC 8628) through openid-client. The user code and the
// verification URL go to stderr (stdout stays for results), the browser is opened when there is
// one, and the polling follows the server's `interval` and `slow_down`. The keychain is checked
// before the device code is asked for, so nobody approves a login that could not be kept.

import { type TokenStorage, updateConfig } from '../config.js';
import type { Profile } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import type { Output } from '../output.js';
import { loginScope, oauthConfiguration, oauthErrorCode, transportError } from './oauth.js';
import { type StoredLogin, tokenStore } from './storage.js';
import { storeOf, withRefreshLock } from './tokenSource.js';

export interface LoginOptions {
  scopes?: string[];
  insecureStorage: boolean;
  browser: boolean;
}

export interface LoginResult {
  login: StoredLogin;
  storage: TokenStorage;
  location: string;
}

/** Whether a browser can be opened for the user: a terminal, and on Linux a display. */
function browserAvailable(): boolean {
  if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) return false;
  if (process.platform === 'linux') return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
  return true;
}

export async function runLogin(profile: Profile & { storage?: TokenStorage }, options: LoginOptions, output: Output): Promise<LoginResult> {
  const scope = loginScope(options.scopes);
  const storage: TokenStorage = options.insecureStorage ? 'file' : 'keychain';
  const store = await tokenStore(storage, profile.name);
  // Fails now, naming --insecure-storage, when there is no keychain (a damaged entry is replaced below).
  await store.read().catch((error: unknown) => {
    if (!(error instanceof CliError && error.exitCode === EXIT.authentication)) throw error;
  });

  const { client, config } = await oauthConfiguration(profile.baseUrl);
  let device: Awaited<ReturnType<typeof client.initiateDeviceAuthorization>>;
  try {
    device = await client.initiateDeviceAuthorization(config, { scope });
  } catch (error) {
    const code = oauthErrorCode(error);
    if (code !== undefined) throw new CliError(`the service refused the login request: ${code}`);
    throw transportError(profile.baseUrl, error);
  }
  const url = device.verification_uri_complete ?? device.verification_uri;
  output.progress(`! First copy your one-time code: ${device.user_code}`);
  if (options.browser && browserAvailable()) {
    output.progress(`Opening ${url} in your browser…`);
    try {
      const { default: open } = await import('open');
      const child = await open(url);
      child.on('error', () => output.progress(`Could not open a browser: open ${url} yourself.`));
    } catch {
      output.progress(`Could not open a browser: open ${url} yourself.`);
    }
  } else {
    output.progress(`Open ${url} in a browser and approve the code.`);
  }
  output.progress('Waiting for the approval…');

  let answer: Awaited<ReturnType<typeof client.pollDeviceAuthorizationGrant>>;
  try {
    answer = await client.pollDeviceAuthorizationGrant(config, device);
  } catch (error) {
    const code = oauthErrorCode(error);
    if (code === 'access_denied') throw new CliError('the login was denied in the browser', EXIT.cancelled);
    if (code === 'expired_token') throw new CliError('the code expired before it was approved: run `iw login` again');
    if (code !== undefined) throw new CliError(`the login failed: ${code}`);
    if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
      throw new CliError('the code expired before it was approved: run `iw login` again');
    }
    throw transportError(profile.baseUrl, error);
  }

  const login: StoredLogin = {
    baseUrl: profile.baseUrl,
    accessToken: answer.access_token,
    ...(answer.refresh_token !== undefined ? { refreshToken: answer.refresh_token } : {}),
    expiresAt: Date.now() + (answer.expires_in ?? 900) * 1000,
    scope: answer.scope ?? scope,
  };

  // The login this one replaces: its grant is revoked below, so no forgotten CLI session stays valid.
  const previousStore = await storeOf(profile);
  const previous = await previousStore?.read().catch(() => undefined);
  await withRefreshLock(profile, async () => {
    await store.write(login);
    await updateConfig((file) => {
      file.profiles[profile.name] = { ...file.profiles[profile.name], baseUrl: profile.baseUrl, storage };
    });
    if (previousStore && previousStore.kind !== storage) await previousStore.clear().catch(() => false);
  });
  if (previous?.refreshToken !== undefined && previous.baseUrl === profile.baseUrl && previous.refreshToken !== login.refreshToken) {
    await client.tokenRevocation(config, previous.refreshToken, { token_type_hint: 'refresh_token' }).catch(() => {});
  }
  return { login, storage, location: store.location };
}
