import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { setWritePause } from '../management/maintenance.js';
import { callCli, cliWriteState, loginCli, serveOnLoopback, type CliSession } from './helpers/cli.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import { bootstrapWorkspace, callWithSession, createTestContext, expectError, type TestContext } from './helpers/context.js';
import { createIntegration } from './helpers/integrations.js';

// 03 Account routes of the CLI API: identity, workspaces, sessions, revocation and logout, signed
// in through the real device grant over HTTP (test/helpers/cliLogin.ts).

let ctx: TestContext;
let baseUrl: string;
beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
});
afterEach(async () => {
  await setWritePause(ctx.deps.redis, false);
});
afterAll(async () => {
  await ctx.close();
});

const CLIENT_ID_FORM = /^clic_[0-9a-z]{26}$/;

/** Asserts an error answer and that the request wrote nothing the user's CLI requests can write. */
async function expectRefused(userId: string, request: () => ReturnType<typeof callCli>, status: number, error: string): Promise<void> {
  const before = await cliWriteState(ctx, userId);
  expectError(await request(), status, error);
  expect(await cliWriteState(ctx, userId)).toEqual(before);
}

async function auditRows(
  targetId: string,
): Promise<{ workspace_id: string | null; actor_type: string; actor_id: string; metadata: unknown }[]> {
  const { rows } = await ctx.deps.pool.query(
    `SELECT workspace_id, actor_type, actor_id, metadata FROM audit_events
      WHERE action = 'cli_client.revoke' AND target_id = $1 ORDER BY workspace_id NULLS FIRST`,
    [targetId],
  );
  return rows;
}

describe('authentication of /v1/cli', () => {
  let owner: BootstrapResult;
  let cli: CliSession;
  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    cli = await loginCli(baseUrl, owner.sessionToken);
  });

  it('accepts the CLI access token of the device grant', async () => {
    const res = await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/me');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('refuses API keys, ingest tokens, refresh tokens, session cookies and garbage with 401 unauthenticated', async () => {
    const created = await createIntegration(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const bearers = [
      owner.apiKey.key,
      created.collectorConfiguration.ingestToken,
      owner.sessionToken,
      cli.refreshToken,
      'svc_api_garbage',
      `${cli.accessToken}x`,
    ];
    for (const url of ['/v1/cli/me', '/v1/cli/workspaces', '/v1/cli/sessions']) {
      for (const bearer of bearers) {
        await expectRefused(owner.user.id, () => callCli(ctx, bearer, 'GET', url), 401, 'unauthenticated');
      }
      await expectRefused(
        owner.user.id,
        () => callCli(ctx, null, 'GET', url, { headers: { cookie: `session=${owner.sessionToken}` } }),
        401,
        'unauthenticated',
      );
      await expectRefused(owner.user.id, () => callCli(ctx, null, 'GET', url), 401, 'unauthenticated');
      // Another scheme, or the token without its scheme.
      await expectRefused(
        owner.user.id,
        () => callCli(ctx, null, 'GET', url, { headers: { authorization: `Basic ${cli.accessToken}` } }),
        401,
        'unauthenticated',
      );
      await expectRefused(
        owner.user.id,
        () => callCli(ctx, null, 'GET', url, { headers: { authorization: cli.accessToken } }),
        401,
        'unauthenticated',
      );
    }
    // An API key presented on the writes is refused too, and revokes nothing.
    await expectRefused(owner.user.id, () => callCli(ctx, owner.apiKey.key, 'DELETE', '/v1/cli/session'), 401, 'unauthenticated');
    await expectRefused(
      owner.user.id,
      () => callCli(ctx, owner.apiKey.key, 'DELETE', `/v1/cli/sessions/${cli.clientId}`),
      401,
      'unauthenticated',
    );
    expect((await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);
  });
});

describe('GET /v1/cli/me', () => {
  it('answers the identity: schemaVersion 1, the user and the granted scopes', async () => {
    const user = await createConsoleUser(ctx, { name: 'Ada Lovelace' });
    const cli = await loginCli(baseUrl, user.sessionToken, ['incidents:read', 'observations:read']);
    const res = await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/me');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['schemaVersion', 'scopes', 'user']);
    expect(body.schemaVersion).toBe(1);
    expect(body.user).toEqual({ id: user.userId, name: 'Ada Lovelace' });
    expect([...body.scopes].sort()).toEqual(expect.arrayContaining(['service:cli:incidents:read', 'service:cli:observations:read'].sort()));
    expect(body.scopes).not.toContain('service:cli:repairs:export');
  });

  it('refuses any query parameter with 400 invalid_cli_query', async () => {
    const user = await createConsoleUser(ctx);
    const cli = await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
    for (const query of ['?x=1', '?limit=1', '?workspace=a', '?=', '?cursor=']) {
      await expectRefused(user.userId, () => callCli(ctx, cli.accessToken, 'GET', `/v1/cli/me${query}`), 400, 'invalid_cli_query');
    }
  });
});

describe('GET /v1/cli/workspaces', () => {
  let user: { userId: string; sessionToken: string };
  let cli: CliSession;
  let expected: { id: string; slug: string; name: string; role: string }[];

  beforeAll(async () => {
    // The user owns one workspace, administers one, views one, was in one now archived, and is
    // no member of another.
    const own = await bootstrapWorkspace(ctx, { workspace: 'Own space' });
    user = { userId: own.user.id, sessionToken: own.sessionToken };
    const administered = await bootstrapWorkspace(ctx, { workspace: 'Administered' });
    const viewed = await bootstrapWorkspace(ctx, { workspace: 'Viewed' });
    const archived = await bootstrapWorkspace(ctx, { workspace: 'Archived' });
    await bootstrapWorkspace(ctx, { workspace: 'Foreign' });
    await addWorkspaceMember(ctx, administered.workspace.id, user.userId, 'admin');
    await addWorkspaceMember(ctx, viewed.workspace.id, user.userId, 'viewer');
    await addWorkspaceMember(ctx, archived.workspace.id, user.userId, 'admin');
    expect((await callWithSession(ctx, archived.sessionToken, 'POST', `/workspaces/${archived.workspace.slug}/archive`)).statusCode).toBe(
      200,
    );
    expected = [
      { id: own.workspace.id, slug: own.workspace.slug, name: 'Own space', role: 'owner' },
      { id: administered.workspace.id, slug: administered.workspace.slug, name: 'Administered', role: 'admin' },
      { id: viewed.workspace.id, slug: viewed.workspace.slug, name: 'Viewed', role: 'viewer' },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    cli = await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
  });

  it('lists the active workspaces where the user is owner, admin or viewer, one page by default', async () => {
    const res = await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/workspaces');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ schemaVersion: 1, items: expected, nextCursor: null });
  });

  it('pages with limit and an opaque cursor', async () => {
    const seen: unknown[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    for (let page = 0; page < 5; page++) {
      const res = await callCli(
        ctx,
        cli.accessToken,
        'GET',
        `/v1/cli/workspaces?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      seen.push(...body.items);
      sizes.push(body.items.length);
      cursor = body.nextCursor;
      if (cursor === null) break;
      expect(cursor).not.toContain(expected[1].id);
    }
    expect(sizes).toEqual([2, 1]);
    expect(seen).toEqual(expected);
  });

  it('answers an empty page for a user without workspaces', async () => {
    const loner = await createConsoleUser(ctx);
    const lonerCli = await loginCli(baseUrl, loner.sessionToken, ['incidents:read']);
    const res = await callCli(ctx, lonerCli.accessToken, 'GET', '/v1/cli/workspaces');
    expect(res.json()).toEqual({ schemaVersion: 1, items: [], nextCursor: null });
  });

  it('drops a workspace at once when the membership is removed', async () => {
    const removed = expected.find((item) => item.role === 'viewer')!;
    await ctx.deps.pool.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [removed.id, user.userId]);
    try {
      const res = await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/workspaces');
      expect(res.json().items).toEqual(expected.filter((item) => item !== removed));
    } finally {
      await addWorkspaceMember(ctx, removed.id, user.userId, 'viewer');
    }
  });

  it('refuses unknown members, bad limits and foreign cursors with 400 invalid_workspace_query', async () => {
    const first = (await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/workspaces?limit=1')).json();
    const raw: string = first.nextCursor;
    // Another user's cursor of the same list, and this user's cursor of the sessions list.
    const other = await bootstrapWorkspace(ctx);
    await addWorkspaceMember(ctx, expected[0].id, other.user.id, 'viewer');
    const otherCli = await loginCli(baseUrl, other.sessionToken, ['incidents:read']);
    const otherCursor = (await callCli(ctx, otherCli.accessToken, 'GET', '/v1/cli/workspaces?limit=1')).json().nextCursor;
    expect(otherCursor).toEqual(expect.any(String));
    await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
    const sessionsCursor = (await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/sessions?limit=1')).json().nextCursor;
    expect(sessionsCursor).toEqual(expect.any(String));
    const flipped = raw.slice(0, -1) + (raw.endsWith('A') ? 'B' : 'A');
    const queries = [
      '?limit=0',
      '?limit=101',
      '?limit=01',
      '?limit=-1',
      '?limit=abc',
      '?limit=1&limit=2',
      '?x=1',
      '?slug=a',
      `?cursor=${encodeURIComponent(otherCursor)}`,
      `?cursor=${encodeURIComponent(sessionsCursor)}`,
      `?cursor=${encodeURIComponent(flipped)}`,
      `?cursor=${encodeURIComponent(raw.slice(0, 20))}`,
      `?cursor=${expected[0].id}`,
      '?cursor=',
    ];
    for (const query of queries) {
      await expectRefused(
        user.userId,
        () => callCli(ctx, cli.accessToken, 'GET', `/v1/cli/workspaces${query}`),
        400,
        'invalid_workspace_query',
      );
    }
    // The same cursor on its own list and user goes on.
    expect((await callCli(ctx, cli.accessToken, 'GET', `/v1/cli/workspaces?cursor=${encodeURIComponent(raw)}`)).statusCode).toBe(200);
  });
});

describe('GET /v1/cli/sessions', () => {
  it("lists the user's CLI clients with the caller's marked current, never tokens, paged", async () => {
    const user = await createConsoleUser(ctx);
    const first = await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
    const second = await loginCli(baseUrl, user.sessionToken, ['incidents:read', 'observations:read']);
    const third = await loginCli(baseUrl, user.sessionToken, ['repairs:read']);
    // Another user's client is not listed.
    const stranger = await createConsoleUser(ctx);
    const strangerCli = await loginCli(baseUrl, stranger.sessionToken, ['incidents:read']);

    const res = await callCli(ctx, second.accessToken, 'GET', '/v1/cli/sessions');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.schemaVersion).toBe(1);
    expect(body.nextCursor).toBeNull();
    const ids = [first.clientId, second.clientId, third.clientId].sort();
    expect(body.items.map((item: { id: string }) => item.id)).toEqual(ids);
    expect(ids).not.toContain(strangerCli.clientId);
    for (const item of body.items) {
      expect(Object.keys(item).sort()).toEqual(['createdAt', 'current', 'id', 'lastUsedAt', 'scopes']);
      expect(item.id).toMatch(CLIENT_ID_FORM);
      expect(item.current).toBe(item.id === second.clientId);
      expect(Number.isNaN(Date.parse(item.createdAt))).toBe(false);
    }
    expect(body.items.find((item: { id: string }) => item.id === second.clientId).scopes).toEqual(
      expect.arrayContaining(['service:cli:incidents:read', 'service:cli:observations:read']),
    );
    for (const secret of [first, second, third].flatMap((session) => [session.accessToken, session.refreshToken])) {
      expect(res.body).not.toContain(secret);
    }

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await callCli(
        ctx,
        first.accessToken,
        'GET',
        `/v1/cli/sessions?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json().items).toHaveLength(1);
      paged.push(page.json().items[0].id);
      cursor = page.json().nextCursor;
    } while (cursor !== null);
    expect(paged).toEqual(ids);
  });

  it('refuses unknown members, bad limits and foreign cursors with 400 invalid_cli_session_query', async () => {
    const user = await createConsoleUser(ctx);
    const cli = await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
    await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
    const raw: string = (await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/sessions?limit=1')).json().nextCursor;
    const other = await createConsoleUser(ctx);
    const otherCli = await loginCli(baseUrl, other.sessionToken, ['incidents:read']);
    await loginCli(baseUrl, other.sessionToken, ['incidents:read']);
    const otherCursor = (await callCli(ctx, otherCli.accessToken, 'GET', '/v1/cli/sessions?limit=1')).json().nextCursor;
    expect(otherCursor).toEqual(expect.any(String));
    const queries = [
      '?limit=0',
      '?limit=101',
      '?limit=x',
      '?limit=1&limit=1',
      '?current=true',
      `?cursor=${encodeURIComponent(otherCursor)}`,
      `?cursor=${encodeURIComponent(`${raw.slice(0, -2)}AA`)}`,
      `?cursor=${cli.clientId}`,
      '?cursor=',
    ];
    for (const query of queries) {
      await expectRefused(
        user.userId,
        () => callCli(ctx, cli.accessToken, 'GET', `/v1/cli/sessions${query}`),
        400,
        'invalid_cli_session_query',
      );
    }
    expect((await callCli(ctx, cli.accessToken, 'GET', `/v1/cli/sessions?cursor=${encodeURIComponent(raw)}`)).statusCode).toBe(200);
  });
});

describe('DELETE /v1/cli/sessions/{clientId}', () => {
  let owner: BootstrapResult;
  let viewed: BootstrapResult;
  let archived: BootstrapResult;

  beforeAll(async () => {
    owner = await bootstrapWorkspace(ctx);
    viewed = await bootstrapWorkspace(ctx);
    archived = await bootstrapWorkspace(ctx);
    await addWorkspaceMember(ctx, viewed.workspace.id, owner.user.id, 'viewer');
    await addWorkspaceMember(ctx, archived.workspace.id, owner.user.id, 'admin');
    await callWithSession(ctx, archived.sessionToken, 'POST', `/workspaces/${archived.workspace.slug}/archive`);
  });

  it("revokes another of the user's clients at once, audited in each current workspace", async () => {
    const caller = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    const target = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    expect((await callCli(ctx, target.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);

    const res = await callCli(ctx, caller.accessToken, 'DELETE', `/v1/cli/sessions/${target.clientId}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ schemaVersion: 1, revoked: true });
    expectError(await callCli(ctx, target.accessToken, 'GET', '/v1/cli/me'), 401, 'unauthenticated');
    // Its refresh token is revoked with it.
    const refreshed = await fetch(`${baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: target.refreshToken, client_id: 'service-management-cli' }),
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
    // The caller is still signed in, and the revoked client is no longer listed.
    const sessions = (await callCli(ctx, caller.accessToken, 'GET', '/v1/cli/sessions')).json();
    expect(sessions.items.map((item: { id: string }) => item.id)).not.toContain(target.clientId);
    expect(sessions.items.map((item: { id: string }) => item.id)).toContain(caller.clientId);

    const expectedWorkspaces = [owner.workspace.id, viewed.workspace.id].sort();
    const rows = await auditRows(target.clientId);
    expect(rows.map((row) => row.workspace_id).sort()).toEqual(expectedWorkspaces);
    for (const row of rows) {
      expect(row).toMatchObject({
        actor_type: 'user',
        actor_id: owner.user.id,
        metadata: { reason: 'session_revocation', actorClientId: caller.clientId },
      });
    }

    // Revoking it again answers the same and writes nothing.
    const before = await cliWriteState(ctx, owner.user.id);
    const again = await callCli(ctx, caller.accessToken, 'DELETE', `/v1/cli/sessions/${target.clientId}`);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ schemaVersion: 1, revoked: true });
    expect(await cliWriteState(ctx, owner.user.id)).toEqual(before);
  });

  it('records one audit row without a workspace for a user who has none', async () => {
    const loner = await createConsoleUser(ctx);
    const caller = await loginCli(baseUrl, loner.sessionToken, ['incidents:read']);
    const target = await loginCli(baseUrl, loner.sessionToken, ['incidents:read']);
    expect((await callCli(ctx, caller.accessToken, 'DELETE', `/v1/cli/sessions/${target.clientId}`)).statusCode).toBe(200);
    expect((await auditRows(target.clientId)).map((row) => row.workspace_id)).toEqual([null]);
  });

  it("answers 404 cli_session_not_found for another user's client, an unknown or malformed id, and writes nothing", async () => {
    const caller = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    const stranger = await bootstrapWorkspace(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, stranger.user.id, 'admin');
    const strangerCli = await loginCli(baseUrl, stranger.sessionToken, ['incidents:read']);
    for (const id of [
      strangerCli.clientId,
      'clic_00000000000000000000000000',
      'clic_x',
      'sess_00000000000000000000000000',
      'x'.repeat(300),
    ]) {
      await expectRefused(
        owner.user.id,
        () => callCli(ctx, caller.accessToken, 'DELETE', `/v1/cli/sessions/${id}`),
        404,
        'cli_session_not_found',
      );
    }
    // The stranger's client still works.
    expect((await callCli(ctx, strangerCli.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);
    expect(await auditRows(strangerCli.clientId)).toEqual([]);
    await expectRefused(
      owner.user.id,
      () => callCli(ctx, caller.accessToken, 'DELETE', `/v1/cli/sessions/${strangerCli.clientId}?x=1`),
      400,
      'invalid_cli_session_query',
    );
  });

  it('is paused with the other writes (503 mode_cutover_write_paused) and revokes nothing', async () => {
    const caller = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    const target = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    await setWritePause(ctx.deps.redis, true);
    await expectRefused(
      owner.user.id,
      () => callCli(ctx, caller.accessToken, 'DELETE', `/v1/cli/sessions/${target.clientId}`),
      503,
      'mode_cutover_write_paused',
    );
    await expectRefused(
      owner.user.id,
      () => callCli(ctx, caller.accessToken, 'DELETE', '/v1/cli/session'),
      503,
      'mode_cutover_write_paused',
    );
    await setWritePause(ctx.deps.redis, false);
    expect((await callCli(ctx, target.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);
  });
});

describe('DELETE /v1/cli/session', () => {
  it('logs this client out (consent, access and refresh tokens) and leaves the other clients signed in', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const leaving = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    const staying = await loginCli(baseUrl, owner.sessionToken, ['incidents:read']);
    const res = await callCli(ctx, leaving.accessToken, 'DELETE', '/v1/cli/session');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ schemaVersion: 1, revoked: true });
    expectError(await callCli(ctx, leaving.accessToken, 'GET', '/v1/cli/me'), 401, 'unauthenticated');
    expectError(await callCli(ctx, leaving.accessToken, 'DELETE', '/v1/cli/session'), 401, 'unauthenticated');
    const refreshed = await fetch(`${baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: leaving.refreshToken, client_id: 'service-management-cli' }),
    });
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
    const { rows } = await ctx.deps.pool.query('SELECT revoked_at FROM cli_clients WHERE id = $1', [leaving.clientId]);
    expect(rows[0].revoked_at).not.toBeNull();
    expect((await callCli(ctx, staying.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);
    expect(await auditRows(leaving.clientId)).toEqual([
      expect.objectContaining({ workspace_id: owner.workspace.id, metadata: { reason: 'logout', actorClientId: leaving.clientId } }),
    ]);
  });

  it('refuses a query with 400 invalid_cli_session_query and stays signed in', async () => {
    const user = await createConsoleUser(ctx);
    const cli = await loginCli(baseUrl, user.sessionToken, ['incidents:read']);
    await expectRefused(
      user.userId,
      () => callCli(ctx, cli.accessToken, 'DELETE', '/v1/cli/session?all=true'),
      400,
      'invalid_cli_session_query',
    );
    expect((await callCli(ctx, cli.accessToken, 'GET', '/v1/cli/me')).statusCode).toBe(200);
  });
});
