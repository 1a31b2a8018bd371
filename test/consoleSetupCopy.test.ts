import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BootstrapResult } from '../management/admin/bootstrap.js';
import { setupCopyErrorInWords, setupCopyFormErrors, type SetupCopyForm } from '../management/console/setupWords.js';
import type { ErrorCode } from '../shared/errors/index.js';
import { launchBrowser, type PageProblem, type TestBrowser } from './helpers/browser.js';
import { addWorkspaceMember, createConsoleUser } from './helpers/consoleUsers.js';
import { CONSOLE_ARTIFACTS, openConsolePage, settleConsolePage } from './helpers/consolePages.js';
import { signedInPage as openSignedInPage } from './helpers/consoleSession.js';
import {
  advanceClock,
  bootstrapWorkspace,
  type CallOptions,
  callWithSession,
  createTestContext,
  newIdempotencyKey,
  resetClockAndHooks,
  type TestContext,
} from './helpers/context.js';
import { openApiRegistration, registerDraft } from './helpers/contracts.js';
import { createIntegration, insertSlotConnection } from './helpers/integrations.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { createRuleWithKey } from './helpers/rules.js';

// Issue 31: second-mode setup and configuration copy in the console, in Debian's Chromium against
// the compiled management plane (`npm run build` first): an Integration with only Sandbox is set
// up in Live from the Integrations page with a copied contract version and rule (preview →
// review with its snapshot and fingerprint → apply → the token once), then a new rule is copied
// between the two modes, its copy reversed, a conflict and an expired review shown in words.
// Screenshots: test-artifacts/console/.

let ctx: TestContext;
let management: SpawnedProcess;
let browser: TestBrowser;
let owner: BootstrapResult;

beforeAll(async () => {
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
  ctx = await createTestContext();
  // The pages post with the session cookie and their own Origin, which must be the console's origin.
  const port = await freePort();
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { CONSOLE_ORIGIN: `http://127.0.0.1:${port}` }, port);
  browser = await launchBrowser();
  owner = await bootstrapWorkspace(ctx);
}, 60_000);
afterEach(async () => {
  browser.clearProblems();
  await resetClockAndHooks(ctx);
});
afterAll(async () => {
  await browser?.close();
  await management?.stop();
  await ctx?.close();
});

const noProblems = (problems: PageProblem[]) => expect(problems, JSON.stringify(problems, null, 2)).toEqual([]);
const signedInPage = (options: { phone?: boolean } = {}) => openSignedInPage(browser, management.url, owner.sessionToken, options);
const consolePath = (path: string) => `/console/workspaces/${owner.workspace.slug}/${path}`;

/** Opens `path` of the spawned plane (consolePages.ts: headers, timings, screenshot). */
const open = (page: Page, path: string, name: string) => openConsolePage(page, `${management.url}${path}`, name);
const settle = settleConsolePage;

/**
 * Clicks `button` and waits for the page the form's script loads next (a new load: a receipt has
 * the address of its review), which must match `url`.
 */
async function clickThrough(page: Page, button: ReturnType<Page['getByRole']>, url: RegExp, name: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), button.click()]);
  expect(page.url()).toMatch(url);
  await settle(page, name);
}

/** An Integration with only its Sandbox connection, holding a contract version and an enabled rule. */
async function sandboxOnly(name: string): Promise<{ integrationId: string; sandboxId: string; versionId: string; ruleId: string }> {
  const key = owner.apiKey.key;
  const created = await createIntegration(ctx, key, { mode: 'sandbox', name });
  const sandboxId = created.integration.connectionId;
  const draft = await registerDraft(ctx, key, sandboxId, openApiRegistration('2024-01'));
  const rule = await createRuleWithKey(ctx, key, sandboxId, {
    sourceEventType: 'order.paid',
    expectedObjectType: 'shipment',
    maxDelayMs: 60_000,
    enabled: true,
  });
  return { integrationId: created.integration.id, sandboxId, versionId: draft.contract.id, ruleId: rule.rule.id };
}

/** The session status read of a setup or configuration operation (what the page must show). */
/** The Live slot of `source`'s Integration, without traffic or configuration (a copy's destination). */
function addLiveSlot(source: { integrationId: string }) {
  return insertSlotConnection(ctx, { workspaceId: owner.workspace.id, integrationId: source.integrationId, category: 'live' });
}

/** A copy review into `destinationId`, previewed through the owner's session route (201). */
async function previewCopy(
  destinationId: string,
  body: Record<string, unknown>,
): Promise<{ operationId: string; fingerprint: string; snapshot: { fingerprint: string } }> {
  const res = await callWithSession(
    ctx,
    owner.sessionToken,
    'POST',
    `/workspaces/${owner.workspace.slug}/connections/${destinationId}/configuration-copy/preview`,
    { body },
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function statusOf(kind: 'connection-setup' | 'configuration-operations', operationId: string) {
  const res = await callWithSession(ctx, owner.sessionToken, 'GET', `/workspaces/${owner.workspace.slug}/${kind}/${operationId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function liveConnections(integrationId: string): Promise<{ id: string; revision: string }[]> {
  const { rows } = await ctx.deps.pool.query<{ id: string; revision: string }>(
    "SELECT id, revision FROM connections WHERE integration_id = $1 AND mode = 'live'",
    [integrationId],
  );
  return rows;
}

async function rulesOf(connectionId: string) {
  const { rows } = await ctx.deps.pool.query<{ id: string; source_event_type: string; expected_object_type: string; enabled: boolean }>(
    'SELECT id, source_event_type, expected_object_type, max_delay_ms, enabled FROM reconciliation_rules WHERE connection_id = $1 ORDER BY created_at, id',
    [connectionId],
  );
  return rows;
}

/** The review page shows the status read's fingerprints, and its snapshot whole as JSON. */
async function expectReviewOf(page: Page, status: { fingerprint: string; snapshot: { fingerprint: string } }): Promise<void> {
  expect(await page.locator('.approval-fingerprint').textContent()).toBe(status.fingerprint);
  expect(await page.locator('.configuration-fingerprint').textContent()).toBe(status.snapshot.fingerprint);
  await page.locator('#snapshot-json summary').click();
  expect(JSON.parse((await page.locator('#snapshot-json code').textContent()) ?? '')).toEqual(status.snapshot);
}

describe('second-mode setup in the console', () => {
  it('sets up Live from the Integrations page with a copied version and rule, and shows the token once', async () => {
    const source = await sandboxOnly('Refunds <feed> & "co"');
    const page = await signedInPage();
    await open(page, consolePath('integrations'), 'setup-integrations');
    const article = page.locator(`article[id="${source.integrationId}"]`);
    expect(await article.getByRole('link', { name: /^Copy configuration/ }).count()).toBe(0);
    await Promise.all([page.waitForURL(/\/setup\?mode=live$/), article.getByRole('link', { name: 'Set up Live' }).click()]);
    await settle(page, 'setup-live');
    expect(await page.locator('h1').textContent()).toBe('Set up Live for Refunds <feed> & "co"');
    const version = page.locator(`tr[data-version="${source.versionId}"]`);
    expect(await version.locator('td').nth(2).textContent()).toBe('Draft');

    // By keyboard: tick both, then submit the preview.
    await page.getByLabel('2024-01').focus();
    await page.keyboard.press('Space');
    await page.getByLabel('order.paid → shipment').focus();
    await page.keyboard.press('Space');
    expect(await page.getByLabel('2024-01').isChecked()).toBe(true);
    expect(await page.getByLabel('order.paid → shipment').isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Preview' }).focus();
    await Promise.all([page.waitForURL(/\/connection-setup\/consetup_/), page.keyboard.press('Enter')]);
    await settle(page, 'setup-review');

    const operationId = (await page.locator('.operation-id').textContent()) ?? '';
    const review = await statusOf('connection-setup', operationId);
    expect(review.status).toBe('previewed');
    await expectReviewOf(page, review);
    expect(await page.locator('.review-status').getAttribute('data-status')).toBe('previewed');
    expect(await page.locator('#snapshot-identity').textContent()).toContain('Refunds <feed> & "co"');
    expect(await page.locator('#snapshot-source').textContent()).toContain(source.sandboxId);
    expect(await page.locator('#snapshot-destination').textContent()).toContain('Live');
    expect(await page.locator(`#snapshot-contracts tr[data-source-version="${source.versionId}"] td`).first().textContent()).toBe(
      '2024-01',
    );
    const ruleCells = await page.locator(`#snapshot-rules tr[data-source-rule="${source.ruleId}"] td`).allTextContents();
    expect(ruleCells.slice(0, 4)).toEqual(['order.paid', 'shipment', '1 minute', 'Off']);
    // A review creates nothing.
    expect(await liveConnections(source.integrationId)).toEqual([]);

    await page.getByRole('button', { name: 'Apply: set up Live' }).click();
    const shown = page.locator('#setup-applied');
    await shown.waitFor();
    expect(await page.locator('#setup-apply').isHidden()).toBe(true);
    // The "waiting for your approval" line goes with the form.
    expect(await page.locator('.review-status').isHidden()).toBe(true);
    const ingestToken = (await shown.locator('.token-value').textContent()) ?? '';
    expect(ingestToken).toMatch(/^svc_ing_/);
    const liveId = (await shown.locator('.new-connection-id').textContent()) ?? '';
    const [live] = await liveConnections(source.integrationId);
    expect(live.id).toBe(liveId);
    const { rows: keys } = await ctx.deps.pool.query<{ connection_key: string; integration_key: string }>(
      'SELECT c.connection_key, i.integration_key FROM connections c JOIN integrations i ON i.id = c.integration_id WHERE c.id = $1',
      [liveId],
    );
    expect((await shown.locator('.snippet').textContent())?.split('\n')).toEqual([
      `INTEGRATION_KEY=${keys[0].integration_key}`,
      `CONNECTION_KEY=${keys[0].connection_key}`,
      `INGEST_TOKEN=${ingestToken}`,
    ]);
    const copy = shown.locator('button[data-copy="#setup-token"]');
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(ingestToken);
    await page.screenshot({ path: `${CONSOLE_ARTIFACTS}/setup-token-shown.png`, fullPage: true });

    // In PostgreSQL: the Live connection holds the copied draft and the copied rule, turned off.
    const { rows: drafts } = await ctx.deps.pool.query(
      'SELECT declared_version, lifecycle_status FROM contract_versions WHERE connection_id = $1',
      [liveId],
    );
    expect(drafts).toEqual([{ declared_version: '2024-01', lifecycle_status: 'draft' }]);
    expect(await rulesOf(liveId)).toEqual([
      expect.objectContaining({ source_event_type: 'order.paid', expected_object_type: 'shipment', max_delay_ms: 60_000, enabled: false }),
    ]);

    // Shown once: the page again is the credential-free receipt.
    await open(page, consolePath(`connection-setup/${operationId}`), 'setup-receipt');
    expect(await page.content()).not.toContain(ingestToken);
    expect(await page.locator('.review-status').getAttribute('data-status')).toBe('completed');
    expect(await page.locator('#receipt-snippet').textContent()).toBe(
      `INTEGRATION_KEY=${keys[0].integration_key}\nCONNECTION_KEY=${keys[0].connection_key}`,
    );
    expect(await page.locator('#mapped-contracts tbody tr').count()).toBe(1);
    expect(await page.locator('#mapped-rules tbody td').nth(1).textContent()).toBe((await rulesOf(liveId))[0].id);

    // Both slots now: each offers to copy its configuration to the other.
    await open(page, consolePath('integrations'), 'setup-integrations-after');
    expect(await article.getByRole('link', { name: 'Set up Live' }).count()).toBe(0);
    expect(await article.getByRole('link', { name: 'Copy configuration to Live' }).count()).toBe(1);
    expect(await article.getByRole('link', { name: 'Copy configuration to Sandbox' }).count()).toBe(1);
    noProblems(browser.problems());
  }, 60_000);

  it('says a review has expired, in words beside Apply and on the page, and creates nothing', async () => {
    const source = await sandboxOnly('Expiring');
    const page = await signedInPage();
    await open(page, consolePath(`integrations/${source.integrationId}/setup?mode=live`), 'setup-expiring');
    await clickThrough(page, page.getByRole('button', { name: 'Preview' }), /\/connection-setup\/consetup_/, 'setup-review-empty');
    expect(await page.locator('#snapshot-contracts').textContent()).toBe('No contract version.');

    // Ten minutes of server time pass (the operator test clock every process of the run reads).
    await advanceClock(ctx, 10 * 60_000);
    await page.getByRole('button', { name: 'Apply: set up Live' }).click();
    const error = page.locator('#setup-apply-error');
    await error.waitFor();
    expect(await error.textContent()).toBe(setupCopyErrorInWords('setup-apply', 'connection_preview_expired'));
    expect(await liveConnections(source.integrationId)).toEqual([]);
    expect(browser.problems()).toEqual([expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 409/) })]);
    browser.clearProblems();

    await page.reload();
    await settle(page, 'setup-review-expired');
    expect(await page.locator('.review-status').getAttribute('data-status')).toBe('expired');
    expect(await page.locator('.review-status').textContent()).toContain('This review has expired');
    expect(await page.getByRole('button', { name: /^Apply/ }).count()).toBe(0);
    await Promise.all([page.waitForURL(/\/setup\?mode=live$/), page.getByRole('link', { name: 'Preview again' }).click()]);
    await settle(page, 'setup-preview-again');
    noProblems(browser.problems());
  }, 60_000);

  it('says an expired copy review has expired, and previews again with the same selection checked', async () => {
    const source = await sandboxOnly('Expiring copy');
    const live = await addLiveSlot(source);
    const review = await previewCopy(live.connectionId, { sourceConnectionId: source.sandboxId, ruleIds: [source.ruleId] });
    await advanceClock(ctx, 10 * 60_000);
    const page = await signedInPage();
    await open(page, consolePath(`configuration-operations/${review.operationId}`), 'copy-review-expired');
    expect(await page.locator('.review-status').getAttribute('data-status')).toBe('expired');
    expect(await page.locator('.review-status').textContent()).toContain('This review has expired');
    expect(await page.getByRole('button', { name: /^Apply/ }).count()).toBe(0);
    // The expired review still shows what it was, with its original fingerprint.
    await expectReviewOf(page, await statusOf('configuration-operations', review.operationId));
    await Promise.all([page.waitForURL(/\/configuration-copy\?/), page.getByRole('link', { name: 'Preview again' }).click()]);
    await settle(page, 'copy-preview-again');
    expect(await page.getByLabel('order.paid → shipment').isChecked()).toBe(true);
    expect(await page.getByLabel('2024-01').isChecked()).toBe(false);
    expect(await rulesOf(live.connectionId)).toEqual([]);
    noProblems(browser.problems());
  }, 60_000);
});

describe('configuration copy in the console', () => {
  it('copies a new rule to Live, refuses it twice in words, reverses the copy, and the rule is gone', async () => {
    const source = await sandboxOnly('Invoices');
    const live = await addLiveSlot(source);
    const rule = await createRuleWithKey(ctx, owner.apiKey.key, source.sandboxId, {
      sourceEventType: 'refund.issued',
      expectedObjectType: 'credit_note',
      maxDelayMs: 3_600_000,
    });

    const page = await signedInPage();
    await open(page, consolePath('integrations'), 'copy-integrations');
    const sandboxSlot = page.locator(`.slot[data-connection="${source.sandboxId}"]`);
    await Promise.all([
      page.waitForURL(/\/configuration-copy\?source=/),
      sandboxSlot.getByRole('link', { name: 'Copy configuration to Live' }).click(),
    ]);
    await settle(page, 'copy-live');
    await page.getByLabel('refund.issued → credit_note').check();
    await clickThrough(page, page.getByRole('button', { name: 'Preview' }), /\/configuration-operations\/concopy_/, 'copy-review');

    const copyId = (await page.locator('.operation-id').textContent()) ?? '';
    const review = await statusOf('configuration-operations', copyId);
    await expectReviewOf(page, review);
    expect(await page.locator('#snapshot-destination').textContent()).toContain(live.connectionId);
    const cells = await page.locator(`#snapshot-rules tr[data-source-rule="${rule.rule.id}"] td`).allTextContents();
    expect(cells.slice(0, 4)).toEqual(['refund.issued', 'credit_note', '1 hour', 'Off']);
    expect(await rulesOf(live.connectionId)).toEqual([]);

    await clickThrough(
      page,
      page.getByRole('button', { name: 'Apply: copy to Live' }),
      new RegExp(`/configuration-operations/${copyId}$`),
      'copy-receipt',
    );
    expect(await page.locator('.review-status').getAttribute('data-status')).toBe('completed');
    const [copied] = await rulesOf(live.connectionId);
    expect(copied).toEqual(
      expect.objectContaining({ source_event_type: 'refund.issued', expected_object_type: 'credit_note', enabled: false }),
    );
    expect(await page.locator(`#mapped-rules tr[data-rule="${copied.id}"] td`).allTextContents()).toEqual([rule.rule.id, copied.id]);
    noProblems(browser.problems());

    // The same rule again: Live has it, and the preview says so beside the selection.
    const again = await signedInPage();
    await open(again, consolePath(`connections/${live.connectionId}/configuration-copy?source=${source.sandboxId}`), 'copy-again');
    expect(await again.locator(`tr[data-rule="${rule.rule.id}"] .badge`).textContent()).toBe('Live has this rule');
    await again.getByLabel('refund.issued → credit_note').check();
    await again.getByRole('button', { name: 'Preview' }).click();
    const conflict = again.locator('#copy-preview-selection-error');
    await conflict.waitFor();
    expect(await conflict.textContent()).toBe(setupCopyErrorInWords('copy-preview', 'configuration_destination_conflict'));
    expect(await conflict.textContent()).toMatch(/^The destination already has/);
    await again.screenshot({ path: `${CONSOLE_ARTIFACTS}/copy-conflict.png`, fullPage: true });
    expect(browser.problems()).toEqual([expect.objectContaining({ kind: 'console', text: expect.stringMatching(/status of 409/) })]);
    browser.clearProblems();

    // Reverse: a review of what is removed, then the removal receipt.
    await clickThrough(
      page,
      page.getByRole('button', { name: 'Reverse this copy' }),
      /\/configuration-operations\/concomp_/,
      'reverse-review',
    );
    const reversalId = (await page.locator('.operation-id').textContent()) ?? '';
    const reversal = await statusOf('configuration-operations', reversalId);
    expect(reversal).toMatchObject({ action: 'configuration.compensate', status: 'previewed', originalOperationId: copyId });
    await expectReviewOf(page, reversal);
    expect(await page.locator(`#mapped-rules tr[data-rule="${copied.id}"]`).count()).toBe(1);
    expect(await rulesOf(live.connectionId)).toHaveLength(1);
    await clickThrough(
      page,
      page.getByRole('button', { name: 'Apply: remove what the copy created' }),
      new RegExp(`/configuration-operations/${reversalId}$`),
      'reverse-receipt',
    );
    expect(await page.locator('h1').textContent()).toBe('Copy reversed');
    expect(await page.locator(`#mapped-rules tr[data-rule="${copied.id}"] td`).allTextContents()).toEqual([rule.rule.id, copied.id]);
    expect(await rulesOf(live.connectionId)).toEqual([]);
    // The source keeps both of its rules.
    expect((await rulesOf(source.sandboxId)).map((row) => row.id).sort()).toEqual([source.ruleId, rule.rule.id].sort());
    noProblems(browser.problems());
  }, 90_000);

  it('fits the selections and reviews at phone width', async () => {
    const source = await sandboxOnly('Phone');
    const live = await addLiveSlot(source);
    const review = await previewCopy(live.connectionId, {
      sourceConnectionId: source.sandboxId,
      contractVersionIds: [source.versionId],
      ruleIds: [source.ruleId],
    });
    const phone = await signedInPage({ phone: true });
    const fits = async (path: string, name: string) => {
      await open(phone, consolePath(path), name);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
    };
    await fits(`configuration-operations/${review.operationId}`, 'copy-review-phone');
    await expectReviewOf(phone, review);
    await fits(`connections/${live.connectionId}/configuration-copy?source=${source.sandboxId}`, 'copy-phone');
    const unset = await sandboxOnly('Phone setup');
    await fits(`integrations/${unset.integrationId}/setup?mode=live`, 'setup-phone');
    const setup = await callWithSession(
      ctx,
      owner.sessionToken,
      'POST',
      `/workspaces/${owner.workspace.slug}/integrations/${unset.integrationId}/connections/preview`,
      {
        body: {
          destinationMode: 'live',
          sourceConnectionId: unset.sandboxId,
          contractVersionIds: [unset.versionId],
          ruleIds: [unset.ruleId],
        },
      },
    );
    expect(setup.statusCode, setup.body).toBe(201);
    await fits(`connection-setup/${setup.json().operationId}`, 'setup-review-phone');
    await phone.getByRole('button', { name: 'Apply: set up Live' }).click();
    await phone.locator('#setup-applied').waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await phone.screenshot({ path: `${CONSOLE_ARTIFACTS}/setup-token-phone.png`, fullPage: true });
    noProblems(browser.problems());
  }, 60_000);
});

describe('reviews of someone else', () => {
  it('are the 404 page for another admin of the workspace, as an unknown operation is', async () => {
    const source = await sandboxOnly('Not yours');
    const res = await callWithSession(
      ctx,
      owner.sessionToken,
      'POST',
      `/workspaces/${owner.workspace.slug}/integrations/${source.integrationId}/connections/preview`,
      { body: { destinationMode: 'live' } },
    );
    expect(res.statusCode, res.body).toBe(201);
    const admin = await createConsoleUser(ctx);
    await addWorkspaceMember(ctx, owner.workspace.id, admin.userId, 'admin');
    for (const [token, path] of [
      [admin.sessionToken, `connection-setup/${res.json().operationId}`],
      [owner.sessionToken, 'connection-setup/consetup_00000000000000000000000000'],
      [owner.sessionToken, 'configuration-operations/concopy_00000000000000000000000000'],
    ]) {
      const page = await callWithSession(ctx, token, 'GET', consolePath(path));
      expect(page.statusCode, path).toBe(404);
      expect(page.body).toContain('<h1>Not found</h1>');
    }
  });
});

describe('a copy page with nothing to copy from', () => {
  it('offers to set the other mode up instead, and refuses a source of another Integration', async () => {
    const lonely = await sandboxOnly('Lonely');
    const page = await callWithSession(ctx, owner.sessionToken, 'GET', consolePath(`connections/${lonely.sandboxId}/configuration-copy`));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('has no Live connection to copy from');
    expect(page.body).toContain(`href="${consolePath(`integrations/${lonely.integrationId}/setup?mode=live`)}"`);
    expect(page.body).not.toContain('configuration-copy/preview');
    const other = await sandboxOnly('Other');
    const foreign = await callWithSession(
      ctx,
      owner.sessionToken,
      'GET',
      consolePath(`connections/${lonely.sandboxId}/configuration-copy?source=${other.sandboxId}`),
    );
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toEqual({ error: 'configuration_scope_mismatch' });
  });
});

describe('in an archived workspace', () => {
  it('shows completed receipts without "Reverse this copy", and says pending reviews cannot be applied', async () => {
    const boot = await bootstrapWorkspace(ctx);
    const slug = boot.workspace.slug;
    const created = await createIntegration(ctx, boot.apiKey.key, { mode: 'sandbox', name: 'Archived' });
    const sandboxId = created.integration.connectionId;
    const rule = await createRuleWithKey(ctx, boot.apiKey.key, sandboxId, {
      sourceEventType: 'order.paid',
      expectedObjectType: 'shipment',
      maxDelayMs: 60_000,
    });
    const live = await insertSlotConnection(ctx, {
      workspaceId: boot.workspace.id,
      integrationId: created.integration.id,
      category: 'live',
    });
    const session = (method: 'GET' | 'POST', url: string, options: CallOptions = {}) =>
      callWithSession(ctx, boot.sessionToken, method, url, options);
    const preview = () =>
      session('POST', `/workspaces/${slug}/connections/${live.connectionId}/configuration-copy/preview`, {
        body: { sourceConnectionId: sandboxId, ruleIds: [rule.rule.id] },
      });
    // Two reviews of the same rule while Live has none: one is applied, the other stays pending.
    const pending = await preview();
    expect(pending.statusCode, pending.body).toBe(201);
    const done = await preview();
    expect(done.statusCode, done.body).toBe(201);
    const applied = await session('POST', `/workspaces/${slug}/configuration-operations/${done.json().operationId}/apply`, {
      body: { approvalFingerprint: done.json().fingerprint },
      idempotencyKey: newIdempotencyKey(),
    });
    expect(applied.statusCode, applied.body).toBe(201);
    const archived = await session('POST', `/workspaces/${slug}/archive`, { body: {} });
    expect(archived.statusCode, archived.body).toBe(200);

    const receipt = await session('GET', `/console/workspaces/${slug}/configuration-operations/${done.json().operationId}`);
    expect(receipt.statusCode).toBe(200);
    expect(receipt.body).toContain('data-status="completed"');
    expect(receipt.body).not.toContain('Reverse this copy');
    expect(receipt.body).toContain('This workspace is archived: its copies cannot be reversed.');
    const copyPage = await session('GET', `/console/workspaces/${slug}/connections/${live.connectionId}/configuration-copy`);
    expect(copyPage.statusCode).toBe(200);
    expect(copyPage.body).toContain('This workspace is archived: nothing can be copied in it.');
    expect(copyPage.body).not.toContain('configuration-copy/preview');
    const review = await session('GET', `/console/workspaces/${slug}/configuration-operations/${pending.json().operationId}`);
    expect(review.statusCode).toBe(200);
    expect(review.body).toContain('data-status="archived"');
    expect(review.body).not.toContain('/apply');
  });
});

describe('the words of the setup and copy forms', () => {
  // 02 "Errors": the Setup table and the Configuration copy and compensation table.
  const SETUP_CODES = [
    'invalid_connection_setup',
    'configuration_scope_mismatch',
    'configuration_selection_invalid',
    'idempotency_key_required',
    'unauthenticated',
    'insufficient_scope',
    'integration_not_found',
    'operation_not_found',
    'workspace_modes_unavailable',
    'workspace_unavailable',
    'configuration_snapshot_too_large',
    'connection_already_configured',
    'approval_mismatch',
    'connection_preview_expired',
    'connection_preview_stale',
    'idempotency_conflict',
    'rate_limited',
  ] as const;
  const COPY_CODES = [
    'invalid_configuration_request',
    'configuration_selection_invalid',
    'configuration_scope_mismatch',
    'idempotency_key_required',
    'unauthenticated',
    'insufficient_scope',
    'connection_not_found',
    'integration_not_found',
    'operation_not_found',
    'configuration_destination_conflict',
    'configuration_snapshot_too_large',
    'configuration_preview_stale',
    'configuration_preview_expired',
    'approval_mismatch',
    'configuration_compensation_unavailable',
    'idempotency_conflict',
    'workspace_unavailable',
    'workspace_modes_unavailable',
    'rate_limited',
  ] as const;
  const worded = (forms: SetupCopyForm[]) => new Set(forms.flatMap((form) => setupCopyFormErrors(form).map((entry) => entry.code)));

  it('has words for every code of both error tables on the forms that can get it', () => {
    const setup = worded(['setup-preview', 'setup-apply']);
    expect(SETUP_CODES.filter((code) => !setup.has(code))).toEqual([]);
    const copy = worded(['copy-preview', 'copy-apply', 'compensation-preview']);
    expect(COPY_CODES.filter((code) => !copy.has(code))).toEqual([]);
  });

  it('puts selection errors beside the selections and review errors beside Apply', () => {
    const field = (form: SetupCopyForm, code: string) => setupCopyFormErrors(form).find((entry) => entry.code === code)?.field ?? null;
    for (const form of ['setup-preview', 'copy-preview'] as const) {
      for (const code of ['configuration_selection_invalid', 'configuration_scope_mismatch', 'configuration_snapshot_too_large']) {
        expect(field(form, code), `${form} ${code}`).toBe('selection');
      }
    }
    expect(field('copy-preview', 'configuration_destination_conflict')).toBe('selection');
    // The apply forms' own box follows the Apply button.
    for (const code of ['approval_mismatch', 'connection_preview_expired', 'connection_preview_stale']) {
      expect(setupCopyErrorInWords('setup-apply', code as ErrorCode), code).toBeDefined();
      expect(field('setup-apply', code), code).toBeNull();
    }
    for (const code of ['approval_mismatch', 'configuration_preview_expired', 'configuration_preview_stale']) {
      expect(setupCopyErrorInWords('copy-apply', code as ErrorCode), code).toBeDefined();
      expect(field('copy-apply', code), code).toBeNull();
    }
  });
});
