// login, logout, whoami, sessions list|revoke: the account's CLI logins (03 Account routes,
// Authentication "Account CLI OAuth").

import type { Command } from 'commander';
import type { ApiClient } from '../api.js';
import { CLI_SCOPE_SUFFIXES } from '../auth/oauth.js';
import { normalizeBaseUrl } from '../config.js';
import { contextOf } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { renderTable } from '../output.js';
import { withExample } from '../program.js';

interface Identity {
  schemaVersion: number;
  user: { id: string; name: string };
  scopes: string[];
}

interface SessionItem {
  id: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  current: boolean;
}

interface Page<T> {
  schemaVersion: number;
  items: T[];
  nextCursor: string | null;
}

const shortScope = (scope: string) => scope.replace(/^service:cli:/, '');

/** The scopes of a session for a table: `all` for the twelve, else their suffixes (offline_access, always there, left out). */
function scopeSummary(scopes: readonly string[]): string {
  const suffixes = scopes.map(shortScope).filter((scope) => scope !== 'offline_access');
  return suffixes.length === CLI_SCOPE_SUFFIXES.length ? 'all' : suffixes.join(',');
}

/** `2026-11-29T08:58:19.123Z` as `2026-11-29 08:58` (UTC), short enough to leave the ids whole. */
const shortTime = (iso: string | null) => (iso === null ? '-' : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`);

/** Every page of a `{items, nextCursor}` list, as one page with `nextCursor: null`. */
async function allPages<T>(api: ApiClient, path: string): Promise<Page<T>> {
  const items: T[] = [];
  let cursor: string | null = null;
  let first: Page<T> | undefined;
  do {
    const query: string = new URLSearchParams({ limit: '100', ...(cursor === null ? {} : { cursor }) }).toString();
    const page: Page<T> = await api.request<Page<T>>({ method: 'GET', path: `${path}?${query}` });
    first ??= page;
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return { ...(first as Page<T>), items, nextCursor: null };
}

function scopeList(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '');
}

export function registerAuthCommands(program: Command): void {
  withExample(
    program
      .command('login')
      .description('Log in with the device grant: prints a one-time code and opens the approval page in your browser')
      .option(
        '--base-url <url>',
        'the deployment to log in to, saved in the profile (default: IW_BASE_URL, then the saved one, then http://127.0.0.1:8081)',
      )
      .option(
        '--scopes <scopes>',
        'the permissions to ask for, comma-separated (e.g. incidents:read,repairs:read; default: all twelve)',
        scopeList,
      )
      .option('--insecure-storage', 'keep the tokens in a file readable only by you (0600) instead of the OS keychain')
      .option('--no-browser', 'do not open a browser: print the URL to open elsewhere')
      .action(async function (this: Command) {
        const ctx = contextOf(this);
        const options = this.opts<{ baseUrl?: string; scopes?: string[]; insecureStorage?: boolean; browser: boolean }>();
        const saved = await ctx.profile();
        const profile = options.baseUrl === undefined ? saved : { ...saved, baseUrl: normalizeBaseUrl(options.baseUrl) };
        const [{ runLogin }, { createTokenSource }, { createApiClient }] = await Promise.all([
          import('../auth/login.js'),
          import('../auth/tokenSource.js'),
          import('../api.js'),
        ]);
        const result = await runLogin(
          profile,
          { scopes: options.scopes, insecureStorage: options.insecureStorage === true, browser: options.browser },
          ctx.output,
        );
        const api = createApiClient(profile.baseUrl, createTokenSource({ ...profile, storage: result.storage }));
        const identity = await api.request<Identity>({ method: 'GET', path: '/v1/cli/me' });
        ctx.output.result(identity, () =>
          [
            `Logged in to ${profile.baseUrl} as ${identity.user.name} (profile "${profile.name}").`,
            `Tokens are kept in ${result.location}${result.storage === 'file' ? ' (--insecure-storage)' : ''}.`,
          ].join('\n'),
        );
      }),
    'iw login',
    'iw login --profile staging --base-url https://watch.staging.example.com',
    'iw login --scopes incidents:read,repairs:read --insecure-storage --no-browser',
  );

  withExample(
    program
      .command('logout')
      .description('Revoke this login on the service (its access and refresh tokens) and forget it here')
      .action(async function (this: Command) {
        const ctx = contextOf(this);
        const profile = await ctx.profile();
        const { storeOf } = await import('../auth/tokenSource.js');
        const store = await storeOf(profile);
        const login = await store?.read().catch(() => undefined);
        if (!store || !login) {
          ctx.output.progress(`Not logged in (profile "${profile.name}"): nothing to do.`);
          return;
        }
        let answer: Record<string, unknown> | undefined;
        let failure: Error | undefined;
        try {
          answer = await (await ctx.api()).request({ method: 'DELETE', path: '/v1/cli/session' });
        } catch (error) {
          failure = error as Error;
        }
        // The login already refused by the service (expired or revoked): nothing left to revoke.
        const alreadyEnded = failure instanceof CliError && failure.exitCode === EXIT.authentication;
        if (failure && !alreadyEnded && login.refreshToken !== undefined) {
          // The OAuth revocation endpoint revokes the whole grant too, and the write pause does not stop it.
          const { revokeRefreshToken } = await import('../auth/logout.js');
          if (await revokeRefreshToken(login.baseUrl, login.refreshToken)) failure = undefined;
        }
        await store.clear();
        if (failure && !alreadyEnded) {
          throw new CliError(
            `forgot the login of profile "${profile.name}" here, but could not revoke it on the service (${failure.message}); it stays valid until it expires (30 days unused) or is revoked in the console`,
          );
        }
        ctx.output.result(answer ?? { schemaVersion: 1, revoked: true }, () =>
          alreadyEnded
            ? `The login of profile "${profile.name}" had already expired or been revoked; forgot it here.`
            : `Logged out of ${profile.baseUrl} (profile "${profile.name}"): the login is revoked on the service and forgotten here.`,
        );
      }),
    'iw logout',
    'iw logout --profile staging',
  );

  withExample(
    program
      .command('whoami')
      .description('Show who the current login is and what it may do')
      .action(async function (this: Command) {
        const ctx = contextOf(this);
        const profile = await ctx.profile();
        const identity = await (await ctx.api()).request<Identity>({ method: 'GET', path: '/v1/cli/me' });
        ctx.output.result(identity, () =>
          [
            `Logged in to ${profile.baseUrl} as ${identity.user.name} (${identity.user.id})`,
            `Profile: ${profile.name}`,
            `Scopes:  ${identity.scopes.map(shortScope).join(', ')}`,
          ].join('\n'),
        );
      }),
    'iw whoami',
    'iw whoami --json | jq -r .user.id',
  );

  const sessions = program.command('sessions').description("Your account's CLI logins (every device you logged in from)");
  withExample(sessions, 'iw sessions list', 'iw sessions revoke clic_01...');

  withExample(
    sessions
      .command('list')
      .description('List your CLI logins; the one in use here is marked')
      .action(async function (this: Command) {
        const ctx = contextOf(this);
        const page = await allPages<SessionItem>(await ctx.api(), '/v1/cli/sessions');
        ctx.output.result(page, () =>
          renderTable(
            page.items,
            [
              { header: 'ID', value: (row) => row.id },
              { header: 'CURRENT', value: (row) => (row.current ? 'yes' : '') },
              { header: 'CREATED (UTC)', value: (row) => shortTime(row.createdAt) },
              { header: 'LAST USED', value: (row) => shortTime(row.lastUsedAt) },
              { header: 'SCOPES', value: (row) => scopeSummary(row.scopes) },
            ],
            ctx.output.columns,
            ctx.output.color,
          ),
        );
      }),
    'iw sessions list',
    'iw sessions list --json | jq -r ".items[] | select(.current | not) | .id"',
  );

  withExample(
    sessions
      .command('revoke')
      .description('Revoke one of your CLI logins (its access and refresh tokens); revoking the current one logs this profile out')
      .argument('<clientId>', 'the session id (clic_…) that `iw sessions list` shows')
      .action(async function (this: Command, clientId: string) {
        const ctx = contextOf(this);
        const answer = await (await ctx.api()).request({ method: 'DELETE', path: `/v1/cli/sessions/${encodeURIComponent(clientId)}` });
        ctx.output.result(answer, () => `Revoked CLI session ${clientId}.`);
      }),
    'iw sessions revoke clic_01...',
  );
}
