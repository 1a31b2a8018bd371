import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_CONSOLE_CALLERS } from './helpers/consoleUsers.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  countRows,
  createTestContext,
  expectError,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';

// The console's "Add an Integration" route, POST /workspaces/{slug}/integrations: the API's
// creation (01) for the signed-in owner or admin, with its receipt, replay and errors, through the
// real management app and PostgreSQL.

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const BODY = { mode: 'live', name: '  Orders  ', provider: 'Acme', direction: 'outbound', protocol: 'http-api' };
const path = (slug: string) => `/workspaces/${slug}/integrations`;

async function integrationCount(workspaceId: string): Promise<number> {
  return countRows(ctx, 'integrations', 'workspace_id = $1', [workspaceId]);
}

describe('POST /workspaces/{slug}/integrations', () => {
  it('creates the Integration and its first connection for the owner: the token once, then a credential-free replay', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const key = newIdempotencyKey();
    const first = await callWithSession(ctx, owner.sessionToken, 'POST', path(owner.workspace.slug), { body: BODY, idempotencyKey: key });
    expect(first.statusCode, first.body).toBe(201);
    const receipt = first.json();
    expect(receipt).toMatchObject({ replayed: false, credentialRecoveryRequired: false, integration: { mode: 'live' } });
    expect(receipt.collectorConfiguration.ingestToken).toMatch(/^svc_ing_/);
    const { rows } = await ctx.deps.pool.query('SELECT name, provider FROM integrations WHERE id = $1', [receipt.integration.id]);
    expect(rows).toEqual([{ name: 'Orders', provider: 'Acme' }]);
    const audit = await ctx.deps.pool.query(
      'SELECT actor_type, actor_id FROM audit_events WHERE workspace_id = $1 ORDER BY id DESC LIMIT 1',
      [owner.workspace.id],
    );
    expect(audit.rows[0]).toMatchObject({ actor_type: 'user' });

    const again = await callWithSession(ctx, owner.sessionToken, 'POST', path(owner.workspace.slug), { body: BODY, idempotencyKey: key });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ replayed: true, credentialRecoveryRequired: true, integration: receipt.integration });
    expect(again.json().collectorConfiguration.ingestToken).toBeUndefined();
    expect(await integrationCount(owner.workspace.id)).toBe(1);
  });

  it('answers the catalogue errors of creation and writes nothing', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const slug = owner.workspace.slug;
    const cases: [string, Parameters<typeof callWithSession>[4], number, string][] = [
      ['no key', { body: BODY }, 400, 'idempotency_key_required'],
      ['an unknown field', { body: { ...BODY, environmentId: 'env_x' }, idempotencyKey: newIdempotencyKey() }, 400, 'invalid_integration'],
      ['an empty name', { body: { ...BODY, name: '   ' }, idempotencyKey: newIdempotencyKey() }, 400, 'invalid_integration'],
      ['a bad mode', { body: { ...BODY, mode: 'prod' }, idempotencyKey: newIdempotencyKey() }, 400, 'invalid_integration'],
      [
        'another Origin',
        { body: BODY, idempotencyKey: newIdempotencyKey(), headers: { origin: 'https://evil.example' } },
        403,
        'forbidden',
      ],
    ];
    for (const [label, options, status, code] of cases) {
      const res = await callWithSession(ctx, owner.sessionToken, 'POST', path(slug), options);
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
      expect(res.json().error, label).toBe(code);
    }
    // A key used for another body.
    const key = newIdempotencyKey();
    expect((await callWithSession(ctx, owner.sessionToken, 'POST', path(slug), { body: BODY, idempotencyKey: key })).statusCode).toBe(201);
    const conflict = await callWithSession(ctx, owner.sessionToken, 'POST', path(slug), {
      body: { ...BODY, name: 'Other' },
      idempotencyKey: key,
    });
    expectError(conflict, 409, 'idempotency_conflict');
    expect(await integrationCount(owner.workspace.id)).toBe(1);
    // An API key cannot use the session route.
    const withKey = await callWithKey(ctx, owner.apiKey.key, 'POST', path(slug), { body: BODY, idempotencyKey: newIdempotencyKey() });
    expectError(withKey, 401, 'unauthenticated');
    expect(await integrationCount(owner.workspace.id)).toBe(1);
  });

  for (const [caller, tokenFor, status, code] of REFUSED_CONSOLE_CALLERS) {
    it(`refuses ${caller} with ${status} ${code}, writing nothing`, async () => {
      const owner = await bootstrapWorkspace(ctx);
      const token = await tokenFor(ctx, owner.workspace.id);
      const res = await callWithSession(ctx, token, 'POST', path(owner.workspace.slug), {
        body: BODY,
        idempotencyKey: newIdempotencyKey(),
      });
      expectError(res, status, code);
      expect(await integrationCount(owner.workspace.id)).toBe(0);
    });
  }

  it('refuses an archived workspace with 409 workspace_unavailable', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const archived = await callWithSession(ctx, owner.sessionToken, 'POST', `/workspaces/${owner.workspace.slug}/archive`);
    expect(archived.statusCode, archived.body).toBe(200);
    const res = await callWithSession(ctx, owner.sessionToken, 'POST', path(owner.workspace.slug), {
      body: BODY,
      idempotencyKey: newIdempotencyKey(),
    });
    expectError(res, 409, 'workspace_unavailable');
    expect(await integrationCount(owner.workspace.id)).toBe(0);
  });
});
