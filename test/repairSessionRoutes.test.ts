import type { LightMyRequestResponse, RouteOptions } from 'fastify';
import { buildApp } from '../management/app.js';
import {
  APPLY_FORM_ERRORS,
  DECISION_FORM_ERRORS,
  EXPORT_FORM_ERRORS,
  REQUEST_FORM_ERRORS,
  failureInWords,
} from '../management/console/repairWords.js';
import type { FormError } from '../management/console/consoleForm.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback } from './helpers/cli.js';
import { endProposalsInProgress } from './helpers/repairs.js';
import { REFUSED_CONSOLE_CALLERS, addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import {
  advanceClock,
  callWithSession,
  createTestContext,
  expectError,
  newIdempotencyKey,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import {
  callRepairRoute,
  createRepairWorkspace,
  insertProposal,
  repairWriteState,
  type InsertedProposal,
  type RepairWorkspace,
} from './helpers/repairDecisions.js';

// Issue 31: the console's reviewed-repair routes, browser-session adapters of the CLI's (03
// Reviewed repairs; 02: the same paths under /workspaces/{workspaceSlug}, a current owner or admin,
// an active workspace for writes). Proposals are rows written as the repair worker leaves them
// (helpers/repairDecisions.ts); the generation itself runs in test/consoleRepairs.test.ts.

let ctx: TestContext;
let baseUrl: string;

beforeAll(async () => {
  ctx = await createTestContext();
  baseUrl = await serveOnLoopback(ctx);
});
afterEach(async () => {
  await resetClockAndHooks(ctx);
  // Analyzers of later files claim proposals in progress: none of this file's is left in progress.
  await endProposalsInProgress(ctx);
});
afterAll(async () => {
  await ctx?.close();
});

const RATIONALE = 'The vendor sends a coupon now; we accept it.';

interface Setup {
  w: RepairWorkspace;
  p: InsertedProposal;
  slug: string;
}

async function setup(): Promise<Setup> {
  const w = await createRepairWorkspace(ctx, baseUrl);
  const p = await insertProposal(ctx, w);
  return { w, p, slug: w.boot.workspace.slug };
}

const proposalUrl = (s: Setup, tail: string) =>
  `/workspaces/${s.slug}/connections/${s.w.connectionId}/repair-proposals/${s.p.proposalId}/${tail}`;
const requestUrl = (s: Setup) => `/workspaces/${s.slug}/connections/${s.w.connectionId}/incidents/${s.p.incidentId}/repair-proposals`;
const operationUrl = (s: Setup, operationId: string, tail = '') => `/workspaces/${s.slug}/repair-operations/${operationId}${tail}`;

/** A console decision preview by the workspace's owner. */
async function sessionPreview(s: Setup, decision: 'approved' | 'rejected' = 'approved') {
  const res = await callWithSession(ctx, s.w.boot.sessionToken, 'POST', proposalUrl(s, 'decision-preview'), {
    body: { decision, rationale: RATIONALE },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { operationId: string; approvalFingerprint: string; status: string };
}

/** A CLI decision preview by the workspace's owner through their CLI client. */
async function cliPreview(s: Setup) {
  const res = await callRepairRoute(
    ctx,
    s.w.cli.accessToken,
    'POST',
    `/v1/cli/connections/${s.w.connectionId}/repair-proposals/${s.p.proposalId}/decision-preview`,
    { workspace: s.slug, body: { decision: 'approved', rationale: RATIONALE } },
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { operationId: string; approvalFingerprint: string };
}

interface SessionRoute {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  keyed: boolean;
}

/** The five session routes on one proposal and one console preview of it. */
function sessionRoutes(s: Setup, preview: { operationId: string; approvalFingerprint: string }): SessionRoute[] {
  return [
    { name: 'request', method: 'POST', url: requestUrl(s), body: {}, keyed: true },
    {
      name: 'decision preview',
      method: 'POST',
      url: proposalUrl(s, 'decision-preview'),
      body: { decision: 'approved', rationale: RATIONALE },
      keyed: false,
    },
    {
      name: 'apply',
      method: 'POST',
      url: operationUrl(s, preview.operationId, '/apply'),
      body: { approvalFingerprint: preview.approvalFingerprint },
      keyed: true,
    },
    { name: 'operation read', method: 'GET', url: operationUrl(s, preview.operationId), keyed: false },
    { name: 'export', method: 'POST', url: proposalUrl(s, 'export'), body: {}, keyed: true },
  ];
}

function call(token: string | null, route: SessionRoute, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return callWithSession(ctx, token, route.method, route.url, {
    body: route.body,
    headers,
    idempotencyKey: route.keyed ? newIdempotencyKey() : undefined,
  });
}

/** Everything a repair route could write in the workspace, and the proposal's state. */
async function writeState(s: Setup): Promise<unknown> {
  const { rows } = await ctx.deps.pool.query(
    `SELECT (SELECT count(*)::int FROM repair_proposals WHERE workspace_id = $1) AS proposals,
            (SELECT count(*)::int FROM replay_datasets WHERE workspace_id = $1) AS datasets`,
    [s.w.boot.workspace.id],
  );
  return { ...rows[0], decisions: await repairWriteState(ctx, s.w.boot.workspace.id, s.p.proposalId) };
}

describe('who may use the console repair routes', () => {
  it('refuses no session (401), a non-member (404), a viewer (403) and a cross-site write (403), writing nothing', async () => {
    const s = await setup();
    const preview = await sessionPreview(s);
    const before = await writeState(s);
    for (const route of sessionRoutes(s, preview)) {
      for (const [label, caller, status, code] of REFUSED_CONSOLE_CALLERS) {
        const res = await call(await caller(ctx, s.w.boot.workspace.id), route);
        expect(res.statusCode, `${route.name}, ${label}: ${res.body}`).toBe(status);
        expect(res.json()).toEqual({ error: code });
      }
      if (route.method === 'POST') {
        const res = await call(s.w.boot.sessionToken, route, { origin: 'https://elsewhere.example' });
        expectError(res, 403, 'forbidden');
      }
    }
    // The viewer was added (and the non-members made) by the loop: the state is the workspace's own.
    expect(await writeState(s)).toEqual(before);
  });

  it('lets an admin preview and apply; another admin cannot apply or read the first one’s preview (404)', async () => {
    const s = await setup();
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, s.w.boot.workspace.id, admin.userId, 'admin');
    const other = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, s.w.boot.workspace.id, other.userId, 'admin');
    const res = await callWithSession(ctx, admin.sessionToken, 'POST', proposalUrl(s, 'decision-preview'), {
      body: { decision: 'rejected', rationale: RATIONALE },
    });
    expect(res.statusCode, res.body).toBe(201);
    const preview = res.json() as { operationId: string; approvalFingerprint: string };
    const before = await writeState(s);
    const [, , apply, read] = sessionRoutes(s, preview);
    expectError(await call(other.sessionToken, apply), 404, 'operation_not_found');
    expectError(await call(other.sessionToken, read), 404, 'operation_not_found');
    expectError(await call(s.w.boot.sessionToken, apply), 404, 'operation_not_found');
    expect(await writeState(s)).toEqual(before);
    const applied = await call(admin.sessionToken, apply);
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json()).toMatchObject({ action: 'repair.decision', data: { proposalId: s.p.proposalId, status: 'rejected' } });
  });
});

describe('foreign and unknown targets', () => {
  it('answers the reads’ 404s for another workspace’s connection, incident, proposal and operation, writing nothing', async () => {
    const s = await setup();
    const foreign = await setup();
    const foreignPreview = await sessionPreview(foreign);
    const before = await writeState(s);
    const token = s.w.boot.sessionToken;
    const at = (url: string, body: unknown, keyed: boolean) =>
      callWithSession(ctx, token, 'POST', url, { body, idempotencyKey: keyed ? newIdempotencyKey() : undefined });
    const base = `/workspaces/${s.slug}/connections`;
    const decision = { decision: 'approved', rationale: RATIONALE };

    expectError(
      await at(`${base}/${foreign.w.connectionId}/incidents/${foreign.p.incidentId}/repair-proposals`, {}, true),
      404,
      'connection_not_found',
    );
    expectError(
      await at(`${base}/${s.w.connectionId}/incidents/${foreign.p.incidentId}/repair-proposals`, {}, true),
      404,
      'incident_not_found',
    );
    expectError(
      await at(`${base}/${foreign.w.connectionId}/repair-proposals/${foreign.p.proposalId}/decision-preview`, decision, false),
      404,
      'connection_not_found',
    );
    expectError(
      await at(`${base}/${s.w.connectionId}/repair-proposals/${foreign.p.proposalId}/decision-preview`, decision, false),
      404,
      'repair_proposal_not_found',
    );
    expectError(await at(`${base}/${s.w.connectionId}/repair-proposals/rp_unknown/export`, {}, true), 404, 'repair_proposal_not_found');
    expectError(
      await at(`${base}/${s.w.connectionId}/repair-proposals/${foreign.p.proposalId}/export`, {}, true),
      404,
      'repair_proposal_not_found',
    );
    expectError(
      await at(
        `/workspaces/${s.slug}/repair-operations/${foreignPreview.operationId}/apply`,
        { approvalFingerprint: foreignPreview.approvalFingerprint },
        true,
      ),
      404,
      'operation_not_found',
    );
    expectError(
      await callWithSession(ctx, token, 'GET', `/workspaces/${s.slug}/repair-operations/${foreignPreview.operationId}`),
      404,
      'operation_not_found',
    );
    // The foreign workspace's slug is not one this owner is a member of.
    expectError(
      await at(
        `/workspaces/${foreign.slug}/repair-operations/${foreignPreview.operationId}/apply`,
        { approvalFingerprint: foreignPreview.approvalFingerprint },
        true,
      ),
      404,
      'workspace_not_found',
    );
    expect(await writeState(s)).toEqual(before);
  });
});

describe('an archived workspace', () => {
  it('refuses every write (409 workspace_unavailable) and a pending preview’s read, and answers a completed receipt', async () => {
    const s = await setup();
    const applied = await sessionPreview(s);
    const receipt = await callWithSession(ctx, s.w.boot.sessionToken, 'POST', operationUrl(s, applied.operationId, '/apply'), {
      body: { approvalFingerprint: applied.approvalFingerprint },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(receipt.statusCode, receipt.body).toBe(200);
    // A second proposal of the same connection, awaiting approval, with a pending preview.
    const second: Setup = { ...s, p: await insertProposal(ctx, s.w, { property: 'voucher' }) };
    const pending = await sessionPreview(second);

    const archived = await callWithSession(ctx, s.w.boot.sessionToken, 'POST', `/workspaces/${s.slug}/archive`);
    expect(archived.statusCode, archived.body).toBe(200);
    const before = await writeState(second);
    for (const route of sessionRoutes(second, pending)) {
      const res = await call(s.w.boot.sessionToken, route);
      expect(res.statusCode, `${route.name}: ${res.body}`).toBe(409);
      expect(res.json()).toEqual({ error: 'workspace_unavailable' });
    }
    expect(await writeState(second)).toEqual(before);
    const read = await callWithSession(ctx, s.w.boot.sessionToken, 'GET', operationUrl(s, applied.operationId));
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ operationId: applied.operationId, action: 'repair.decision', status: 'completed', replayed: true });
  });
});

describe('a preview belongs to where it was made', () => {
  it('does not apply or read a CLI preview through the session, nor a session preview through the CLI (404 operation_not_found)', async () => {
    const s = await setup();
    const fromCli = await cliPreview(s);
    const fromConsole = await sessionPreview(s);
    const before = await writeState(s);

    expectError(
      await callWithSession(ctx, s.w.boot.sessionToken, 'POST', operationUrl(s, fromCli.operationId, '/apply'), {
        body: { approvalFingerprint: fromCli.approvalFingerprint },
        idempotencyKey: newIdempotencyKey(),
      }),
      404,
      'operation_not_found',
    );
    expectError(await callWithSession(ctx, s.w.boot.sessionToken, 'GET', operationUrl(s, fromCli.operationId)), 404, 'operation_not_found');
    expectError(
      await callRepairRoute(ctx, s.w.cli.accessToken, 'POST', `/v1/cli/operations/${fromConsole.operationId}/apply`, {
        workspace: s.slug,
        body: { approvalFingerprint: fromConsole.approvalFingerprint },
        idempotencyKey: newIdempotencyKey(),
      }),
      404,
      'operation_not_found',
    );
    expectError(
      await callRepairRoute(ctx, s.w.cli.accessToken, 'GET', `/v1/cli/operations/${fromConsole.operationId}`, { workspace: s.slug }),
      404,
      'operation_not_found',
    );
    expect(await writeState(s)).toEqual(before);

    // Each applies where it was made: the CLI's first, which decides the proposal.
    const cliApplied = await callRepairRoute(ctx, s.w.cli.accessToken, 'POST', `/v1/cli/operations/${fromCli.operationId}/apply`, {
      workspace: s.slug,
      body: { approvalFingerprint: fromCli.approvalFingerprint },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(cliApplied.statusCode, cliApplied.body).toBe(200);
    const { rows } = await ctx.deps.pool.query('SELECT user_id, cli_client_id FROM repair_approvals WHERE proposal_id = $1', [
      s.p.proposalId,
    ]);
    expect(rows).toEqual([{ user_id: s.w.boot.user.id, cli_client_id: s.w.cli.clientId }]);
    // The console preview is now stale: it is found (404 no more), and refused as such.
    expectError(
      await callWithSession(ctx, s.w.boot.sessionToken, 'POST', operationUrl(s, fromConsole.operationId, '/apply'), {
        body: { approvalFingerprint: fromConsole.approvalFingerprint },
        idempotencyKey: newIdempotencyKey(),
      }),
      409,
      'review_stale',
    );
  });
});

describe('a console decision and export', () => {
  it('previews, applies, replays, reads and exports; the approval, receipts and audit rows name the user and no client', async () => {
    const s = await setup();
    const preview = await sessionPreview(s);
    expect(preview.status).toBe('previewed');
    const read = await callWithSession(ctx, s.w.boot.sessionToken, 'GET', operationUrl(s, preview.operationId));
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ operationId: preview.operationId, status: 'previewed', review: { rationale: RATIONALE } });

    const key = newIdempotencyKey();
    const apply = () =>
      callWithSession(ctx, s.w.boot.sessionToken, 'POST', operationUrl(s, preview.operationId, '/apply'), {
        body: { approvalFingerprint: preview.approvalFingerprint },
        idempotencyKey: key,
      });
    const applied = await apply();
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json()).toMatchObject({ operationId: preview.operationId, replayed: false, data: { status: 'approved' } });
    const replayed = await apply();
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json()).toEqual({ ...applied.json(), replayed: true });

    const exported = await callWithSession(ctx, s.w.boot.sessionToken, 'POST', proposalUrl(s, 'export'), {
      body: {},
      idempotencyKey: newIdempotencyKey(),
    });
    expect(exported.statusCode, exported.body).toBe(200);
    const bundle = exported.json().data as { filename: string; files: { name: string }[] };
    expect(bundle.filename).toBe(`repair-${s.p.proposalId}`);
    expect(bundle.files.map((file) => file.name)).toEqual(['repair.json', 'REPAIR.md', 'repair.ts', 'repair.overlay.yaml']);

    const approvals = await ctx.deps.pool.query('SELECT user_id, cli_client_id, rationale FROM repair_approvals WHERE proposal_id = $1', [
      s.p.proposalId,
    ]);
    expect(approvals.rows).toEqual([{ user_id: s.w.boot.user.id, cli_client_id: null, rationale: RATIONALE }]);
    const previews = await ctx.deps.pool.query('SELECT user_id, cli_client_id FROM repair_decision_previews WHERE id = $1', [
      preview.operationId,
    ]);
    expect(previews.rows).toEqual([{ user_id: s.w.boot.user.id, cli_client_id: null }]);
    const operations = await ctx.deps.pool.query(
      "SELECT kind, user_id, cli_client_id, api_key_id FROM operations WHERE workspace_id = $1 AND kind LIKE 'repair.%' ORDER BY created_at",
      [s.w.boot.workspace.id],
    );
    expect(operations.rows).toEqual([
      { kind: 'repair.decision', user_id: s.w.boot.user.id, cli_client_id: null, api_key_id: null },
      { kind: 'repair.export', user_id: s.w.boot.user.id, cli_client_id: null, api_key_id: null },
    ]);
    const audit = await ctx.deps.pool.query(
      `SELECT action, actor_type, actor_id, metadata->>'actorClientId' AS client FROM audit_events
        WHERE workspace_id = $1 AND action LIKE 'repair.%' ORDER BY id`,
      [s.w.boot.workspace.id],
    );
    expect(audit.rows).toEqual(
      ['repair.decision.preview', 'repair.decision', 'repair.export'].map((action) => ({
        action,
        actor_type: 'user',
        actor_id: s.w.boot.user.id,
        client: null,
      })),
    );
  });

  it('refuses a too-short rationale (400 invalid_repair_request) and a request without Idempotency-Key, writing nothing', async () => {
    const s = await setup();
    const before = await writeState(s);
    expectError(
      await callWithSession(ctx, s.w.boot.sessionToken, 'POST', proposalUrl(s, 'decision-preview'), {
        body: { decision: 'approved', rationale: '   too short        ' },
      }),
      400,
      'invalid_repair_request',
    );
    expectError(await callWithSession(ctx, s.w.boot.sessionToken, 'POST', requestUrl(s), { body: {} }), 400, 'idempotency_key_required');
    expectError(
      await callWithSession(ctx, s.w.boot.sessionToken, 'POST', proposalUrl(s, 'export'), { body: {} }),
      400,
      'idempotency_key_required',
    );
    expect(await writeState(s)).toEqual(before);
  });
});

describe('the console forms that post to these routes', () => {
  it('have words for every catalogue code their route can answer', async () => {
    const answers = new Map<string, string[]>();
    const app = await buildApp(ctx.deps, {
      onRoute: (route: RouteOptions) => {
        if (typeof route.url !== 'string' || !route.url.startsWith('/workspaces/:workspaceSlug/')) return;
        const config = route.config as { validationError?: string; errors?: readonly string[] } | undefined;
        answers.set(`${route.method} ${route.url}`, [config?.validationError ?? 'invalid_request', ...(config?.errors ?? [])]);
      },
    });
    await app.close();
    const forms: [string, readonly FormError[]][] = [
      ['POST /workspaces/:workspaceSlug/connections/:connectionId/incidents/:incidentId/repair-proposals', REQUEST_FORM_ERRORS],
      ['POST /workspaces/:workspaceSlug/connections/:connectionId/repair-proposals/:proposalId/decision-preview', DECISION_FORM_ERRORS],
      ['POST /workspaces/:workspaceSlug/repair-operations/:operationId/apply', APPLY_FORM_ERRORS],
      ['POST /workspaces/:workspaceSlug/connections/:connectionId/repair-proposals/:proposalId/export', EXPORT_FORM_ERRORS],
    ];
    for (const [route, words] of forms) {
      const codes = answers.get(route);
      expect(codes, route).toBeDefined();
      const worded = new Set(words.map((entry) => entry.code));
      // The session's own answers (401, unverified e-mail, the write pause) come from its hook.
      for (const code of [...(codes ?? []), 'unauthenticated', 'email_verification_required', 'mode_cutover_write_paused']) {
        expect(worded.has(code as FormError['code']), `${route}: ${code}`).toBe(true);
      }
    }
  });
});

// The console's proposal page, served by this app (no analyzer runs here to move a proposal on).
describe('the proposal page in the states a browser run does not stop at', () => {
  const pageOf = (w: RepairWorkspace, proposalId: string, connectionId = w.connectionId) =>
    `/console/workspaces/${w.boot.workspace.slug}/repairs/${proposalId}?integration=${connectionId}`;
  const get = (w: RepairWorkspace, path: string) => callWithSession(ctx, w.boot.sessionToken, 'GET', path);

  it('says a proposal in progress is being generated, with a Reload link; a failed one why; neither has a form', async () => {
    const w = await createRepairWorkspace(ctx, baseUrl);
    const generating = await insertProposal(ctx, w, { validated: false, status: 'generating' });
    const inProgress = await get(w, pageOf(w, generating.proposalId));
    expect(inProgress.statusCode).toBe(200);
    expect(inProgress.body).toContain('data-status="generating">Being generated and validated<');
    expect(inProgress.body).toContain(`<a href="${pageOf(w, generating.proposalId).replace(/&/g, '&amp;')}">Reload</a>`);
    expect(inProgress.body).not.toContain('<form id="repair-');

    const failed = await insertProposal(ctx, w, { validated: false, status: 'failed' });
    await ctx.deps.pool.query("UPDATE repair_proposals SET error_code = 'execution_attempts_exhausted' WHERE id = $1", [failed.proposalId]);
    const failedPage = await get(w, pageOf(w, failed.proposalId));
    expect(failedPage.statusCode).toBe(200);
    expect(failedPage.body).toContain(failureInWords('execution_attempts_exhausted'));
    expect(failedPage.body).not.toContain('<form id="repair-');

    const notPassed = await insertProposal(ctx, w, { replayPassed: false, runStatus: 'failed' });
    const notPassedPage = await get(w, pageOf(w, notPassed.proposalId));
    expect(notPassedPage.body).toContain('The validation did not pass: this candidate cannot be approved.');
    expect(notPassedPage.body).not.toContain('<form id="repair-');
  });

  it('answers the 404 page for another workspace’s proposal, or a proposal named with another connection', async () => {
    const w = await createRepairWorkspace(ctx, baseUrl);
    const foreign = await createRepairWorkspace(ctx, baseUrl);
    const own = await insertProposal(ctx, w);
    const theirs = await insertProposal(ctx, foreign);
    for (const path of [pageOf(w, theirs.proposalId), pageOf(w, own.proposalId, foreign.connectionId), pageOf(w, own.proposalId, '')]) {
      const res = await get(w, path);
      expect(res.statusCode, path).toBe(path.endsWith('integration=') ? 400 : 404);
    }
    expect((await get(w, pageOf(w, theirs.proposalId))).body).toContain('<h1>Not found</h1>');
    expect((await get(w, pageOf(w, own.proposalId))).statusCode).toBe(200);
  });
});

describe('the decision review page', () => {
  const reviewPage = (s: Setup, operationId: string) =>
    `/console/workspaces/${s.slug}/repairs/${s.p.proposalId}/review/${operationId}?integration=${s.w.connectionId}`;

  it('shows the preview with its Apply button, then says when it expired, with no button', async () => {
    const s = await setup();
    const preview = await sessionPreview(s);
    const fresh = await callWithSession(ctx, s.w.boot.sessionToken, 'GET', reviewPage(s, preview.operationId));
    expect(fresh.statusCode).toBe(200);
    expect(fresh.body).toContain(`<code class="approval-fingerprint">${preview.approvalFingerprint}</code>`);
    expect(fresh.body).toContain(`<input type="hidden" name="approvalFingerprint" value="${preview.approvalFingerprint}">`);
    await advanceClock(ctx, 10 * 60_000);
    const expired = await callWithSession(ctx, s.w.boot.sessionToken, 'GET', reviewPage(s, preview.operationId));
    expect(expired.statusCode).toBe(200);
    expect(expired.body).toContain('This review expired ten minutes after it was made.');
    expect(expired.body).not.toContain('<form id="repair-apply"');
  });

  it('is the 404 page for a viewer, another admin, and the review of another proposal', async () => {
    const s = await setup();
    const preview = await sessionPreview(s);
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, s.w.boot.workspace.id, viewer.userId, 'viewer');
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, s.w.boot.workspace.id, admin.userId, 'admin');
    for (const token of [viewer.sessionToken, admin.sessionToken]) {
      const res = await callWithSession(ctx, token, 'GET', reviewPage(s, preview.operationId));
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('<h1>Not found</h1>');
    }
    const other: Setup = { ...s, p: await insertProposal(ctx, s.w, { property: 'voucher' }) };
    expect((await callWithSession(ctx, s.w.boot.sessionToken, 'GET', reviewPage(other, preview.operationId))).statusCode).toBe(404);
    expect((await callWithSession(ctx, s.w.boot.sessionToken, 'GET', reviewPage(s, preview.operationId))).statusCode).toBe(200);
  });
});
