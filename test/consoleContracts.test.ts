import { mkdirSync } from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import type { SchemaShape } from '../shared/analysis/types.js';
import { CONSOLE_ARTIFACTS, openConsolePage, settleConsolePage } from './helpers/consolePages.js';
import { launchBrowser, type PageProblem, type TestBrowser } from './helpers/browser.js';
import { signedInPage as openSignedInPage } from './helpers/consoleSession.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import { bootstrapWorkspace, callWithSession, createTestContext, resetClockAndHooks, type TestContext } from './helpers/context.js';
import { registerDraft } from './helpers/contracts.js';
import { createCollector, startEdge, testClickHouse, type Collector, type Edge } from './helpers/ingest.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { openDriftIncident } from './helpers/driftIncident.js';

// Issue 31: the console's contract pages in a real browser (Debian's Chromium through
// playwright-core) against the compiled management plane over HTTP: a connection with an active
// contract and an open drift incident (the real analyzer), a new version imported from a file on
// the page, its activation review (precondition, the dry-run's impact, the breaking changes
// against the active version), the activation, and the errors in words beside their fields.
// `npm run build` first. Screenshots go to test-artifacts/console/.

const ARTIFACTS = CONSOLE_ARTIFACTS;

const orderDocument = (version: string, order: Record<string, unknown>) => ({
  openapi: '3.0.3',
  info: { title: 'Orders', version },
  paths: {
    '/v1/orders/{orderId}': {
      get: { responses: { '200': { description: 'order', content: { 'application/json': { schema: order } } } } },
    },
  },
});
/** The active version: an order is its id. */
const V1 = orderDocument('1', { type: 'object', required: ['id'], properties: { id: { type: 'string' } } });
/** The vendor's new document: the currency it now sends, and required (a breaking change for older senders). */
const V2 = orderDocument('2', {
  type: 'object',
  required: ['id', 'currency'],
  properties: { id: { type: 'string' }, currency: { type: 'string' } },
});
const DRIFTED: SchemaShape = { kind: 'object', fields: { id: { kind: 'string' }, currency: { kind: 'string' } } };

let ctx: TestContext;
let clickhouse: ClickHouseClient;
let edge: Edge;
let management: SpawnedProcess;
let browser: TestBrowser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ctx = await createTestContext();
  clickhouse = testClickHouse(ctx);
  edge = await startEdge(ctx, clickhouse);
  // The pages post with the session cookie and their own Origin, which must be the console's origin.
  const port = await freePort();
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { CONSOLE_ORIGIN: `http://127.0.0.1:${port}` }, port);
  browser = await launchBrowser();
});
afterEach(async () => {
  browser.clearProblems();
  await resetClockAndHooks(ctx);
});
afterAll(async () => {
  await browser?.close();
  await management?.stop();
  await edge?.close();
  await clickhouse?.close();
  await ctx?.close();
});

interface Drifted {
  owner: BootstrapResult;
  collector: Collector;
  v1: string;
  incidentId: string;
}

/** A live connection with V1 active and an open drift incident (two orders with a currency), analysed by the real analyzer. */
async function driftedConnection(): Promise<Drifted> {
  const { owner, collector, versionId, incidentId } = await openDriftIncident(ctx, clickhouse, edge, { document: V1, shape: DRIFTED });
  return { owner, collector, v1: versionId, incidentId };
}

const signedInPage = (sessionToken: string): Promise<Page> => openSignedInPage(browser, management.url, sessionToken);

/** Opens `path` of the spawned plane (consolePages.ts: headers, timings, screenshot). */
async function open(page: Page, path: string, name: string): Promise<void> {
  await openConsolePage(page, `${management.url}${path}`, name);
}

const settle = settleConsolePage;

const pagePath = (slug: string, connectionId: string) => `/console/workspaces/${slug}/integrations/${connectionId}/contracts`;
const noProblems = (problems: PageProblem[]) => expect(problems, JSON.stringify(problems, null, 2)).toEqual([]);

async function activeVersionOf(connectionId: string): Promise<string | null> {
  const { rows } = await ctx.deps.pool.query<{ active_contract_version_id: string | null }>(
    'SELECT active_contract_version_id FROM connections WHERE id = $1',
    [connectionId],
  );
  return rows[0].active_contract_version_id;
}

describe('the contract pages in a browser', () => {
  it('imports a version from a file, shows its impact and breaking changes before activation, then activates it', async () => {
    const { owner, collector, v1, incidentId } = await driftedConnection();
    const slug = owner.workspace.slug;
    const page = await signedInPage(owner.sessionToken);

    await open(page, pagePath(slug, collector.connectionId), 'contracts-list');
    expect(await page.locator('#active-version').textContent()).toContain(v1);
    expect(await page.locator('#versions tbody tr').count()).toBe(1);

    // The document from a file: the page reads it into the text area, and sends what it shows.
    await page.getByLabel('Version label').fill('2');
    await page.setInputFiles('#document-file', {
      name: 'orders-v2.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(V2)),
    });
    await expect.poll(() => page.getByLabel('Or paste it').inputValue()).toBe(JSON.stringify(V2));
    await Promise.all([page.waitForURL(/\/contracts\/cv_[0-9a-z]{26}$/), page.getByRole('button', { name: 'Import as a draft' }).click()]);
    await settle(page, 'contract-activation-review');
    const v2 = page.url().split('/').pop()!;
    expect(await activeVersionOf(collector.connectionId), 'imported, not activated').toBe(v1);

    // The review, before anything is activated: the precondition, the impact, the breaking changes.
    expect(await page.locator('h1').textContent()).toBe('Activate 2?');
    expect(await page.locator('.expected-active').textContent()).toBe(v1);
    expect(await page.locator('#impact-summary').textContent()).toBe('Activating would resolve 1 incident, open 0, and leave 0 open.');
    expect(await page.locator('#impact-resolves').textContent()).toContain(incidentId);
    const changes = await page
      .locator('#breaking-changes li')
      .evaluateAll((items) => items.map((item) => [item.getAttribute('data-kind'), item.querySelector('.change-path')?.textContent]));
    expect(changes).toEqual([['field_newly_required', 'currency']]);

    await page.getByRole('button', { name: 'Activate 2' }).click();
    await page.locator('#activated').waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Activated');
    expect(await activeVersionOf(collector.connectionId)).toBe(v2);

    // The list now: 2 active, 1 superseded, with its rollback review against 2.
    await open(page, pagePath(slug, collector.connectionId), 'contracts-list-after-activation');
    expect(await page.locator('#active-version').textContent()).toContain(v2);
    const rows = await page
      .locator('#versions tbody tr')
      .evaluateAll((items) => items.map((item) => item.querySelector('td:nth-child(2)')?.textContent));
    expect(rows).toEqual(['Active', 'Superseded']);
    await open(page, `${pagePath(slug, collector.connectionId)}/${v1}`, 'contract-rollback-review');
    expect(await page.locator('h1').textContent()).toBe('Roll back to 1?');
    expect(await page.locator('.expected-active').textContent()).toBe(v2);
    // Rolling back to 1 drops the currency 2 declares.
    expect(await page.locator('#breaking-changes li').getAttribute('data-kind')).toBe('field_removed');
    noProblems(browser.problems());
  });

  it('shows each refused import in words beside its field and changes nothing', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox' });
    await registerDraft(ctx, owner.apiKey.key, collector.connectionId, { declaredVersion: '1', format: 'openapi', document: V1 });
    const page = await signedInPage(owner.sessionToken);
    await open(page, pagePath(owner.workspace.slug, collector.connectionId), 'contracts-list-draft');

    const label = page.getByLabel('Version label');
    const documentField = page.getByLabel('Or paste it');
    // Not JSON: the page's own words, nothing sent.
    await label.fill('1');
    await documentField.fill('openapi: 3.0.3');
    await page.getByRole('button', { name: 'Import as a draft' }).click();
    await expect.poll(() => page.locator('#import-document-error').textContent()).toContain('This document is not JSON');
    expect(await documentField.getAttribute('aria-invalid')).toBe('true');
    // A label already used by another document: beside the label.
    await documentField.fill(JSON.stringify(V2));
    await page.getByRole('button', { name: 'Import as a draft' }).click();
    await expect.poll(() => page.locator('#import-declaredVersion-error').textContent()).toContain('This version label is already used');
    expect(await label.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#import-document-error').isHidden()).toBe(true);
    // A document without an operation: beside the document.
    await label.fill('3');
    await documentField.fill(JSON.stringify({ openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {} }));
    await page.getByRole('button', { name: 'Import as a draft' }).click();
    await expect.poll(() => page.locator('#import-document-error').textContent()).toContain('This document cannot be imported');
    await page.screenshot({ path: `${ARTIFACTS}/contracts-import-errors.png`, fullPage: true });
    const { rows } = await ctx.deps.pool.query('SELECT id FROM contract_versions WHERE connection_id = $1', [collector.connectionId]);
    expect(rows).toHaveLength(1);
    // The routes answered 409 and 400, which Chromium logs as failed loads; nothing else.
    const problems = browser.problems();
    expect(problems.map((problem) => problem.text.replace(/\(.*\)/, '()'))).toEqual([
      'Failed to load resource: the server responded with a status of 409 ()',
      'Failed to load resource: the server responded with a status of 400 ()',
    ]);
  });

  it('sends a visitor without a session to sign in, and back here after', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const page = await browser.newPage();
    const path = pagePath(owner.workspace.slug, collector.connectionId);
    await open(page, path, 'contracts-sign-in');
    expect(page.url()).toBe(`${management.url}/?next=${encodeURIComponent(path)}`);
    expect(await page.locator('#versions, #import').count()).toBe(0);
    noProblems(browser.problems());
  });
});

const rulesPath = (slug: string, connectionId: string) => `/console/workspaces/${slug}/integrations/${connectionId}/rules`;

async function rulesOf(connectionId: string): Promise<string[]> {
  const { rows } = await ctx.deps.pool.query<{ source_event_type: string }>(
    'SELECT source_event_type FROM reconciliation_rules WHERE connection_id = $1 ORDER BY source_event_type',
    [connectionId],
  );
  return rows.map((row) => row.source_event_type);
}

describe('the reconciliation rules page in a browser', () => {
  it('adds a rule, shows a duplicate in words beside its field, and removes the rule', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const page = await signedInPage(owner.sessionToken);
    await open(page, rulesPath(owner.workspace.slug, collector.connectionId), 'rules-empty');
    expect(await page.locator('#no-rules').count()).toBe(1);

    await page.getByLabel('When this event arrives').fill('order.paid');
    await page.getByLabel('Expect this object').fill('shipment');
    await page.getByLabel('Within (seconds)').fill('120');
    await page.getByLabel('Watch it now').check();
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Add the rule' }).click()]);
    await settle(page, 'rules-one');
    expect(await rulesOf(collector.connectionId)).toEqual(['order.paid']);
    const cells = await page.locator('#rules tbody tr td').evaluateAll((items) => items.slice(0, 4).map((item) => item.textContent));
    expect(cells).toEqual(['order.paid', 'shipment', '2 minutes', 'On']);

    // The same rule again, at the page's new revision: refused, in words beside the event field.
    await page.getByLabel('When this event arrives').fill('order.paid');
    await page.getByLabel('Expect this object').fill('shipment');
    await page.getByRole('button', { name: 'Add the rule' }).click();
    await expect
      .poll(() => page.locator('#rule-create-sourceEventType-error').textContent())
      .toContain('already expects this object for this event');
    expect(await page.getByLabel('When this event arrives').getAttribute('aria-invalid')).toBe('true');
    await page.screenshot({ path: `${ARTIFACTS}/rules-duplicate.png`, fullPage: true });

    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Remove the rule for order.paid' }).click()]);
    await settle(page, 'rules-after-remove');
    expect(await rulesOf(collector.connectionId)).toEqual([]);
    expect(await page.locator('#no-rules').count()).toBe(1);
    const problems = browser.problems();
    expect(problems.map((problem) => problem.text.replace(/\(.*\)/, '()'))).toEqual([
      'Failed to load resource: the server responded with a status of 409 ()',
    ]);
  });

  it('answers 404 for a foreign connection and shows a viewer nothing', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const foreign = await createCollector(ctx, other.apiKey.key, { mode: 'sandbox' });
    const res = await callWithSession(ctx, owner.sessionToken, 'GET', rulesPath(owner.workspace.slug, foreign.connectionId));
    expect([res.statusCode, res.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
    expect(res.body).toContain('<h1>Not found</h1>');
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, other.workspace.id, viewer.userId, 'viewer');
    const seen = await callWithSession(ctx, viewer.sessionToken, 'GET', rulesPath(other.workspace.slug, foreign.connectionId));
    expect([seen.statusCode, seen.json()]).toEqual([403, { error: 'forbidden' }]);
  });
});

describe('the console contract routes and pages, over HTTP', () => {
  it('answer 404 for a foreign connection or version, 403 for a viewer, and never show another workspace', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const other = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const foreign = await createCollector(ctx, other.apiKey.key, { mode: 'sandbox' });
    const foreignDraft = await registerDraft(ctx, other.apiKey.key, foreign.connectionId, {
      declaredVersion: '1',
      format: 'openapi',
      document: V1,
    });
    const slug = owner.workspace.slug;
    const get = (url: string, token: string | null = owner.sessionToken) => callWithSession(ctx, token, 'GET', url);

    for (const url of [
      `/workspaces/${slug}/integrations/${foreign.connectionId}/contracts`,
      `/workspaces/${slug}/integrations/${collector.connectionId}/contracts/${foreignDraft.contract.id}`,
      `/workspaces/${slug}/integrations/${collector.connectionId}/contracts/${foreignDraft.contract.id}/impact`,
      pagePath(slug, foreign.connectionId),
      `${pagePath(slug, collector.connectionId)}/${foreignDraft.contract.id}`,
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain(foreignDraft.contract.id);
    }
    // A value PostgreSQL cannot store names nothing: the same 404 as any unknown one (the console's 404 page for a slug).
    const nulSlug = await get(pagePath(`${slug}%00`, collector.connectionId));
    expect([nulSlug.statusCode, nulSlug.headers['content-type']]).toEqual([404, 'text/html; charset=utf-8']);
    // An unknown connection or version under the user's own workspace: the same 404 page.
    for (const url of [pagePath(slug, `${collector.connectionId}%00`), `${pagePath(slug, collector.connectionId)}/cv_%00`]) {
      const res = await get(url);
      expect([res.statusCode, res.body], url).toEqual([404, nulSlug.body]);
    }
    // Another workspace's slug is not found for this user, on the page and the route.
    const otherPage = await get(pagePath(other.workspace.slug, foreign.connectionId));
    expect([otherPage.statusCode, otherPage.body]).toEqual([404, nulSlug.body]);
    expect((await get(`/workspaces/${other.workspace.slug}/integrations/${foreign.connectionId}/contracts`)).json()).toEqual({
      error: 'workspace_not_found',
    });
    const viewer = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, viewer.userId, 'viewer');
    expect((await get(`/workspaces/${slug}/integrations/${collector.connectionId}/contracts`, viewer.sessionToken)).json()).toEqual({
      error: 'forbidden',
    });
    // Without a session: the route is 401, the page a redirect to sign in.
    expect((await get(`/workspaces/${slug}/integrations/${collector.connectionId}/contracts`, null)).statusCode).toBe(401);
    expect((await get(pagePath(slug, collector.connectionId), null)).statusCode).toBe(303);
  });

  it('registers and activates through the same services as the API, audited as the user', async () => {
    const owner = await bootstrapWorkspace(ctx);
    const collector = await createCollector(ctx, owner.apiKey.key, { mode: 'sandbox' });
    const base = `/workspaces/${owner.workspace.slug}/integrations/${collector.connectionId}/contracts`;
    const registered = await callWithSession(ctx, owner.sessionToken, 'POST', base, {
      body: { declaredVersion: '1', format: 'openapi', document: V1 },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const id = (registered.json() as { contract: { id: string } }).contract.id;
    const again = await callWithSession(ctx, owner.sessionToken, 'POST', base, {
      body: { declaredVersion: '1', format: 'openapi', document: V2 },
    });
    expect([again.statusCode, again.json()]).toEqual([409, { error: 'contract_version_already_exists' }]);
    const stale = await callWithSession(ctx, owner.sessionToken, 'POST', `${base}/${id}/activate`, {
      body: { expectedActiveContractVersionId: `cv_${'0'.repeat(26)}`, reason: 'promote' },
    });
    expect([stale.statusCode, stale.json()]).toEqual([409, { error: 'active_contract_changed', activeContractVersionId: null }]);
    const activated = await callWithSession(ctx, owner.sessionToken, 'POST', `${base}/${id}/activate`, {
      body: { expectedActiveContractVersionId: null, reason: 'promote' },
    });
    expect(activated.statusCode, activated.body).toBe(200);
    expect(await activeVersionOf(collector.connectionId)).toBe(id);
    const { rows } = await ctx.deps.pool.query<{ action: string; actor_type: string; actor_id: string }>(
      "SELECT action, actor_type, actor_id FROM audit_events WHERE workspace_id = $1 AND action LIKE 'contract.%' ORDER BY id",
      [owner.workspace.id],
    );
    expect(rows.map((row) => [row.action, row.actor_id])).toEqual([
      ['contract.register', owner.user.id],
      ['contract.activate', owner.user.id],
    ]);
  });
});
