import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { CONSOLE_INCIDENT_PAGE } from '../management/console/incidentsPage.js';
import { CONSOLE_ARTIFACTS, openConsolePage } from './helpers/consolePages.js';
import { launchBrowser, type PageProblem, type TestBrowser } from './helpers/browser.js';
import { signedInPage as openSignedInPage } from './helpers/consoleSession.js';
import { credentialErrorInWords } from '../management/console/credentialWords.js';
import { REFUSED_CONSOLE_CALLERS, addWorkspaceMember, auditActions, createConsoleUser } from './helpers/consoleUsers.js';
import { activateOk, registerDraft } from './helpers/contracts.js';
import {
  bootstrapWorkspace,
  callWithKey,
  callWithSession,
  createTestContext,
  newIdempotencyKey,
  type TestContext,
} from './helpers/context.js';
import { insertIncident } from './helpers/incidents.js';
import { type Collector, createCollector, sendEnvelopes } from './helpers/ingest.js';
import { DRIFTED_ORDERS, ORDERS_DOCUMENT, driftedOrderEnvelopes } from './helpers/ordersDrift.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { waitFor } from './helpers/wait.js';

// Issue 31: the console's Integrations page (Sandbox and Live slots, observation state), a Live
// credential issued from it (the token shown once, copied by its button, the collector
// configuration to paste), drifted traffic sent with that token, and the incident page showing
// its findings; field coverage and the month's usage with its chart. In Debian's Chromium against
// the compiled processes (`npm run build` first). Screenshots: test-artifacts/console/.

const ARTIFACTS = CONSOLE_ARTIFACTS;

let ctx: TestContext;
let edge: SpawnedProcess;
let management: SpawnedProcess;
let analyzer: SpawnedProcess;
let browser: TestBrowser;
let owner: BootstrapResult;
let collector: Collector;

beforeAll(async () => {
  ctx = await createTestContext();
  await mkdir(ARTIFACTS, { recursive: true });
  const port = await freePort();
  edge = await spawnProcess('dist/ingest/main.js', 'INGEST_PORT');
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { CONSOLE_ORIGIN: `http://127.0.0.1:${port}` }, port);
  analyzer = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT', { ANALYZER_ROUND_INTERVAL_MS: '20' });
  browser = await launchBrowser();
  owner = await bootstrapWorkspace(ctx);
  collector = await createCollector(ctx, owner.apiKey.key, { mode: 'live', name: 'Orders <sync> & "co"' });
  const draft = await registerDraft(ctx, owner.apiKey.key, collector.connectionId, {
    declaredVersion: '1',
    format: 'openapi',
    document: ORDERS_DOCUMENT,
  });
  await activateOk(ctx, owner.apiKey.key, collector.connectionId, draft.contract.id, {
    expectedActiveContractVersionId: null,
    reason: 'promote',
  });
}, 120_000);
afterEach(() => {
  browser.clearProblems();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([edge?.stop(), management?.stop(), analyzer?.stop()]);
  await ctx?.close();
});

const noProblems = (problems: PageProblem[]) => expect(problems, JSON.stringify(problems, null, 2)).toEqual([]);

const signedInPage = (sessionToken: string, options: { phone?: boolean } = {}): Promise<Page> =>
  openSignedInPage(browser, management.url, sessionToken, options);

/** Opens a console page of the spawned plane (consolePages.ts: headers, timings, screenshot). */
async function open(page: Page, path: string, screenshot: string): Promise<void> {
  await openConsolePage(page, `${management.url}${path}`, screenshot);
}

async function credentialState(connectionId: string): Promise<{ status: string; revision: string }> {
  const res = await callWithKey(ctx, owner.apiKey.key, 'GET', `/v1/connections/${connectionId}/credentials`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().credential;
}

async function schemaDriftIncident(connectionId: string): Promise<{ id: string; affected_records: string } | undefined> {
  const { rows } = await ctx.deps.pool.query<{ id: string; affected_records: string }>(
    "SELECT id, affected_records FROM incidents WHERE connection_id = $1 AND kind = 'schema-drift'",
    [connectionId],
  );
  return rows[0];
}

/** Sends DRIFTED_ORDERS to the edge with the collector's token, then waits for the incident that counts them all. */
async function sendDriftedOrders(sender: Collector): Promise<{ id: string; affected_records: string }> {
  const sent = await sendEnvelopes({ url: edge.url, clock: ctx.deps.clock }, sender, driftedOrderEnvelopes(sender));
  expect(sent.status, sent.text).toBe(202);
  return waitFor(
    async () => {
      const found = await schemaDriftIncident(sender.connectionId);
      return found && Number(found.affected_records) === DRIFTED_ORDERS.length ? found : undefined;
    },
    30_000,
    'the schema-drift incident with every drifted observation',
  );
}

/** A new workspace with a Live connection under ORDERS_DOCUMENT (registered and activated), its token active. */
async function liveOrdersConnection(name: string): Promise<{ boot: BootstrapResult; collector: Collector }> {
  const boot = await bootstrapWorkspace(ctx);
  const live = await createCollector(ctx, boot.apiKey.key, { mode: 'live', name });
  const draft = await registerDraft(ctx, boot.apiKey.key, live.connectionId, {
    declaredVersion: '1',
    format: 'openapi',
    document: ORDERS_DOCUMENT,
  });
  await activateOk(ctx, boot.apiKey.key, live.connectionId, draft.contract.id, {
    expectedActiveContractVersionId: null,
    reason: 'promote',
  });
  return { boot, collector: live };
}

describe('the Integrations page in a browser', () => {
  it('issues a Live credential once, copies it, and the incident of drifted traffic shows its findings', async () => {
    // The Integration's first token is revoked: the page re-issues one.
    const before = await credentialState(collector.connectionId);
    const revoked = await callWithKey(ctx, owner.apiKey.key, 'POST', `/v1/connections/${collector.connectionId}/credentials/revoke`, {
      body: { expectedRevision: before.revision },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(revoked.statusCode, revoked.body).toBe(201);

    const page = await signedInPage(owner.sessionToken);
    await open(page, `/console/workspaces/${owner.workspace.slug}/integrations`, 'integrations');
    const article = page.locator('article.integration');
    expect(await article.locator('h2').textContent()).toBe('Orders <sync> & "co"');
    expect(await article.locator('.integration-key').textContent()).toBe(collector.integrationKey);
    expect(await page.locator('.slot.not-configured[data-mode="sandbox"]').textContent()).toContain('Not configured');
    const live = page.locator(`.slot[data-connection="${collector.connectionId}"]`);
    expect(await live.locator('.observation-state').getAttribute('data-state')).toBe('waiting_for_observation');
    expect(await live.locator('.credential-status').textContent()).toBe('revoked');
    expect(await live.getByRole('button', { name: 'Rotate' }).count()).toBe(0);

    await live.getByRole('button', { name: 'Issue credential' }).click();
    const token = live.locator('.token-value');
    await token.waitFor();
    const ingestToken = (await token.textContent()) ?? '';
    expect(ingestToken).toMatch(/^svc_ing_/);
    expect((await live.locator('.snippet').textContent())?.split('\n')).toEqual([
      `INTEGRATION_KEY=${collector.integrationKey}`,
      `CONNECTION_KEY=${collector.connectionKey}`,
      `INGEST_TOKEN=${ingestToken}`,
    ]);
    // The button says it copied (its name changes, so it is found by what it copies).
    const copy = live.locator(`button[data-copy="#token-value-${collector.connectionId}"]`);
    expect(await copy.textContent()).toBe('Copy');
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(ingestToken);
    await page.screenshot({ path: `${ARTIFACTS}/integrations-token-shown.png`, fullPage: true });
    await live.getByRole('button', { name: 'Copy configuration' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await live.locator('.snippet').textContent());
    expect((await credentialState(collector.connectionId)).status).toBe('active');
    expect((await auditActions(ctx, owner.workspace.id))[0]).toBe('credential.issue');

    // Shown once: a reload has no token, and offers rotation and revocation.
    await open(page, `/console/workspaces/${owner.workspace.slug}/integrations`, 'integrations-after-issue');
    expect(await page.content()).not.toContain(ingestToken);
    expect(await live.locator('.token').isHidden()).toBe(true);
    expect(await live.locator('.credential-status').textContent()).toBe('active');
    expect(await live.getByRole('button', { name: 'Rotate' }).isVisible()).toBe(true);
    expect(await live.getByRole('button', { name: 'Issue credential' }).count()).toBe(0);

    // The copied token is the collector's: drifted orders sent with it open an incident.
    const incident = await sendDriftedOrders({ ...collector, ingestToken });

    await open(page, `/console/workspaces/${owner.workspace.slug}/integrations`, 'integrations-incident-open');
    expect(await live.locator('.observation-state').getAttribute('data-state')).toBe('incident_open');
    expect(await live.locator('.open-incidents').textContent()).toBe('1');

    await live.getByRole('link', { name: 'Incidents' }).click();
    await page.waitForLoadState('load');
    await open(page, new URL(page.url()).pathname + new URL(page.url()).search, 'incidents');
    const row = page.locator(`tr.incident[data-incident="${incident.id}"]`);
    expect(await row.locator('td').nth(0).textContent()).toBe('Schema drift');
    expect(await row.locator('td').nth(3).textContent()).toBe(String(DRIFTED_ORDERS.length));

    await row.getByRole('link').click();
    await page.waitForLoadState('load');
    await open(page, new URL(page.url()).pathname + new URL(page.url()).search, 'incident-detail');
    expect(await page.locator('h1').textContent()).toBe('Schema drift');
    expect(await page.locator('.affected-records').textContent()).toBe(String(DRIFTED_ORDERS.length));
    const findings = await page
      .locator('tr.finding')
      .evaluateAll((rows) => rows.map((tr) => `${tr.getAttribute('data-kind')} ${tr.querySelector('.finding-path')?.textContent}`));
    expect(findings.sort()).toEqual(
      ['type_mismatch /total', 'undeclared_field /currency', 'required_field_missing /status', 'undeclared_field /shipping'].sort(),
    );
    expect(await page.locator('ul.evidence li').count()).toBe(DRIFTED_ORDERS.length);
    noProblems(browser.problems());
  }, 90_000);

  it('renders the field coverage and the month usage with its chart', async () => {
    // Traffic of its own, in a workspace of its own: the usage totals are this test's alone.
    const { boot, collector: drifted } = await liveOrdersConnection('Orders usage');
    await sendDriftedOrders(drifted);
    const slug = boot.workspace.slug;
    const page = await signedInPage(boot.sessionToken);
    await open(page, `/console/workspaces/${slug}/connections/${drifted.connectionId}/coverage`, 'coverage');
    const operation = page.locator('section.operation[data-operation="GET /v1/orders/{orderId}:response:200"]');
    expect(await operation.textContent()).toContain(`${DRIFTED_ORDERS.length} observations`);

    await open(page, `/console/workspaces/${slug}/usage?integration=${drifted.connectionId}`, 'usage');
    expect(await page.locator('.live-total').textContent()).toBe(String(DRIFTED_ORDERS.length));
    expect(await page.locator('.daily-total').textContent()).toBe(String(DRIFTED_ORDERS.length));
    const bars = page.locator('figure.chart svg g.bar');
    expect(await bars.count()).toBeGreaterThanOrEqual(1);
    const today = new Date(ctx.deps.clock.nowMs()).toISOString().slice(0, 10);
    expect(await bars.last().locator('title').textContent()).toBe(`${today}: ${DRIFTED_ORDERS.length} observations`);

    // At phone width: the pages fit the screen (nothing wider than the viewport but the tables' own scroll).
    const phone = await signedInPage(boot.sessionToken, { phone: true });
    for (const [path, name] of [
      [`/console/workspaces/${slug}/integrations`, 'integrations-phone'],
      [`/console/workspaces/${slug}/usage?integration=${drifted.connectionId}`, 'usage-phone'],
    ]) {
      await open(phone, path, name);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
    }
    noProblems(browser.problems());
  }, 60_000);
});

describe('more of the pages in a browser', () => {
  it('shows a stale credential change in words beside the form, and changes nothing', async () => {
    const sandbox = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Refunds' });
    const page = await signedInPage(owner.sessionToken);
    await open(page, `/console/workspaces/${owner.workspace.slug}/integrations`, 'integrations-two');
    const slot = page.locator(`.slot[data-connection="${sandbox.connectionId}"]`);
    expect(await slot.locator('.credential-status').textContent()).toBe('active');
    // The connection changes after the page was loaded: the page's reviewed revision is stale.
    const { revision } = await credentialState(sandbox.connectionId);
    const rotated = await callWithKey(ctx, owner.apiKey.key, 'POST', `/v1/connections/${sandbox.connectionId}/credentials/rotate`, {
      body: { expectedRevision: revision },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(rotated.statusCode, rotated.body).toBe(201);
    await slot.getByRole('button', { name: 'Revoke' }).click();
    const error = page.locator(`#revoke-${sandbox.connectionId}-error`);
    await error.waitFor();
    expect(await error.textContent()).toBe(credentialErrorInWords('connection_configuration_changed'));
    expect(await error.textContent()).toMatch(/^This connection changed since the page was loaded/);
    expect(await slot.locator('.credential-status').textContent()).toBe('active');
    expect((await credentialState(sandbox.connectionId)).status).toBe('active');
    await page.screenshot({ path: `${ARTIFACTS}/integrations-stale-error.png`, fullPage: true });
    // The route's 409 is the one thing Chromium logs: a network line, not a script error.
    expect(browser.problems()).toEqual([
      expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 409 \(Conflict\)/) }),
    ]);
  });

  it('pages the incidents of a connection, newest first, with a cursor bound to its list', async () => {
    const paged = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox', name: 'Paged' });
    const target = {
      workspaceId: owner.workspace.id,
      integrationId: paged.workspaceIntegrationId,
      connectionId: paged.connectionId,
      environmentId: paged.environmentId,
      mode: 'sandbox' as const,
    };
    const total = CONSOLE_INCIDENT_PAGE + 3;
    const ids: string[] = [];
    for (let index = 0; index < total; index++) {
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString();
      ids.push(await insertIncident(ctx, target, { createdAt, status: index % 2 === 0 ? 'open' : 'resolved' }));
    }
    const newestFirst = [...ids].reverse();
    const page = await signedInPage(owner.sessionToken);
    await open(page, `/console/workspaces/${owner.workspace.slug}/incidents?integration=${paged.connectionId}`, 'incidents-paged');
    const listed = () => page.locator('tr.incident').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-incident')));
    expect(await listed()).toEqual(newestFirst.slice(0, CONSOLE_INCIDENT_PAGE));
    const older = page.getByRole('link', { name: 'Next page' });
    const cursor = new URL((await older.getAttribute('href')) ?? '', management.url).searchParams.get('cursor') ?? '';
    await Promise.all([page.waitForEvent('load'), older.click()]);
    expect(await listed()).toEqual(newestFirst.slice(CONSOLE_INCIDENT_PAGE));
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);

    await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name: 'Open', exact: true }).click()]);
    expect(await listed()).toEqual(newestFirst.filter((id) => ids.indexOf(id) % 2 === 0));
    noProblems(browser.problems());

    // The cursor of the whole list does not read the open one, nor another reader's list.
    const base = `/console/workspaces/${owner.workspace.slug}/incidents?integration=${paged.connectionId}`;
    for (const url of [`${base}&status=open&cursor=${encodeURIComponent(cursor)}`]) {
      const res = await callWithSession(ctx, owner.sessionToken, 'GET', url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_incident_cursor' });
    }
    const cli = await callWithKey(
      ctx,
      owner.apiKey.key,
      'GET',
      `/v1/incidents?integrationId=${paged.connectionId}&mode=sandbox&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(cli.statusCode, cli.body).toBe(400);
    expect(cli.json()).toEqual({ error: 'invalid_incident_cursor' });
  });
});

describe('the console credential routes', () => {
  const path = (slug: string, connectionId: string, action: string) =>
    `/workspaces/${slug}/connections/${connectionId}/credentials/${action}`;

  it('rotates for the signed-in owner with the API receipt, replays without the token, and 404s a foreign connection', async () => {
    const other = await bootstrapWorkspace(ctx);
    const theirs = await createCollector(ctx, other.apiKey.key, { mode: 'live' });
    const { revision } = await credentialState(collector.connectionId);
    const key = newIdempotencyKey();
    const first = await callWithSession(ctx, owner.sessionToken, 'POST', path(owner.workspace.slug, collector.connectionId, 'rotate'), {
      body: { expectedRevision: revision },
      idempotencyKey: key,
    });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ action: 'rotate', replayed: false, ingestToken: expect.stringMatching(/^svc_ing_/) });
    const again = await callWithSession(ctx, owner.sessionToken, 'POST', path(owner.workspace.slug, collector.connectionId, 'rotate'), {
      body: { expectedRevision: revision },
      idempotencyKey: key,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ replayed: true, credentialRecoveryRequired: true });
    expect(again.json()).not.toHaveProperty('ingestToken');
    const { rows } = await ctx.deps.pool.query('SELECT actor_type FROM audit_events WHERE workspace_id = $1 ORDER BY id DESC LIMIT 1', [
      owner.workspace.id,
    ]);
    expect(rows[0].actor_type).toBe('user');

    // Another workspace's connection, through the owner's own workspace: not found.
    const foreign = await callWithSession(ctx, owner.sessionToken, 'POST', path(owner.workspace.slug, theirs.connectionId, 'revoke'), {
      body: { expectedRevision: '1' },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: 'connection_not_found' });
    // The console pages answer it with their 404 page, as for a workspace the user is not in.
    for (const page of [
      `/console/workspaces/${owner.workspace.slug}/incidents?integration=${theirs.connectionId}`,
      `/console/workspaces/${owner.workspace.slug}/connections/${theirs.connectionId}/coverage`,
    ]) {
      const res = await callWithSession(ctx, owner.sessionToken, 'GET', page);
      expect([res.statusCode, res.headers['content-type']], page).toEqual([404, 'text/html; charset=utf-8']);
      expect(res.body, page).toContain('<h1>Not found</h1>');
      expect(res.body, page).not.toContain(theirs.connectionId);
    }
    const otherWorkspace = await callWithSession(
      ctx,
      owner.sessionToken,
      'GET',
      `/console/workspaces/${other.workspace.slug}/integrations`,
    );
    expect(otherWorkspace.statusCode).toBe(404);
    expect(otherWorkspace.body).toContain('<h1>Not found</h1>');
    // A viewer of the workspace is told the pages are for owners and admins, and sees no Integration.
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    const viewed = await callWithSession(ctx, viewer.sessionToken, 'GET', `/console/workspaces/${owner.workspace.slug}/integrations`);
    expect(viewed.statusCode).toBe(200);
    expect(viewed.body).toContain('Only owners and admins of this workspace');
    expect(viewed.body).not.toContain(collector.connectionId);
  });

  it.each(REFUSED_CONSOLE_CALLERS)('refuses %s', async (_label, sessionOf, status, error) => {
    const token = await sessionOf(ctx, owner.workspace.id);
    const res = await callWithSession(ctx, token, 'POST', path(owner.workspace.slug, collector.connectionId, 'revoke'), {
      body: { expectedRevision: '1' },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json()).toEqual({ error });
  });
});
