import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type PageProblem, type TestBrowser } from './helpers/browser.js';
import { openConsolePage, settleConsolePage } from './helpers/consolePages.js';
import { createTestContext, type TestContext, uniqueEmail } from './helpers/context.js';
import { type Collector, sendEnvelopes } from './helpers/ingest.js';
import { loginIw, removeIwEnvs, runIw } from './helpers/iw.js';
import { DRIFTED_ORDERS, ORDERS_DOCUMENT, driftedOrderEnvelopes } from './helpers/ordersDrift.js';
import { freePort } from './helpers/ports.js';
import { type SpawnedProcess, spawnProcess } from './helpers/processes.js';
import { waitFor } from './helpers/wait.js';

// Issue 31 "Done means": one person's first hour in the console, in Debian's Chromium against the
// compiled processes (`npm run build` first): sign-up, the verification link from the mail outbox,
// a workspace, the first Integration with its Live credential shown once, a contract imported and
// activated, drifted traffic sent with the copied configuration, the incident page with its
// findings; then the CLI's device code approved on the consent page and the CLI's token working.
// Every page is timed and photographed (test/helpers/consolePages.ts: test-artifacts/console/).

const PASSWORD = 'correct horse battery staple';

let ctx: TestContext;
let edge: SpawnedProcess;
let management: SpawnedProcess;
let analyzer: SpawnedProcess;
let browser: TestBrowser;

beforeAll(async () => {
  ctx = await createTestContext();
  const port = await freePort();
  edge = await spawnProcess('dist/ingest/main.js', 'INGEST_PORT');
  management = await spawnProcess('dist/management/main.js', 'MANAGEMENT_PORT', { CONSOLE_ORIGIN: `http://127.0.0.1:${port}` }, port);
  analyzer = await spawnProcess('dist/analyzer/main.js', 'ANALYZER_PORT', { ANALYZER_ROUND_INTERVAL_MS: '20' });
  browser = await launchBrowser();
}, 120_000);
afterEach(() => {
  browser.clearProblems();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([edge?.stop(), management?.stop(), analyzer?.stop()]);
  await removeIwEnvs();
  await ctx?.close();
});

const noProblems = (problems: PageProblem[]) => expect(problems, JSON.stringify(problems, null, 2)).toEqual([]);

/** The value of `NAME=` in the collector configuration the page shows. */
function configValue(snippet: string, name: string): string {
  const line = snippet.split('\n').find((item) => item.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1) : '';
}

describe('the console, from sign-up to an incident and a signed-in CLI', () => {
  it('signs up, verifies, adds an Integration with a Live token, activates a contract, sees drift, and approves the CLI', async () => {
    const page = await browser.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: management.url });
    const email = uniqueEmail('journey');

    // Sign-up, and the link of the mail in the outbox.
    await openConsolePage(page, `${management.url}/console/signup`, 'journey-signup');
    await page.getByLabel('Your name').fill('Grace Journey');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.locator('#signed-up').waitFor();
    const mail = await waitFor(
      async () =>
        (
          await ctx.deps.pool.query<{ body: { link: string } }>(
            "SELECT body FROM email_outbox WHERE lower(to_email) = lower($1) AND kind = 'email_verification'",
            [email],
          )
        ).rows[0],
      10_000,
      'the verification mail',
    );
    await openConsolePage(page, mail.body.link, 'journey-verify-email');
    await page.getByRole('button', { name: 'Verify my e-mail address' }).click();
    await page.locator('#verified').waitFor();

    // Sign-in, then the first workspace.
    await openConsolePage(page, `${management.url}/`, 'journey-sign-in');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    expect(await page.locator('header .email').textContent()).toBe(email);
    await settleConsolePage(page, 'journey-workspaces-empty');
    // Slugs are made from names and unique across the service: a name of this run's own.
    await page.getByLabel('Name', { exact: true }).fill(`Journey ${randomBytes(4).toString('hex')}`);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Create workspace' }).click()]);
    expect(await page.locator('li.workspace').count()).toBe(1);
    const { rows: workspaces } = await ctx.deps.pool.query<{ slug: string; account_id: string }>(
      `SELECT w.slug, w.account_id FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
         JOIN users u ON u.id = m.user_id WHERE lower(u.email) = lower($1)`,
      [email],
    );
    expect(workspaces).toHaveLength(1);
    const slug = workspaces[0].slug;

    // The first Integration, in Live: its token shown once, with the configuration to paste.
    await openConsolePage(page, `${management.url}/console/workspaces/${slug}/integrations`, 'journey-integrations-empty');
    expect(await page.locator('#no-integrations').count()).toBe(1);
    await page.getByLabel('Name', { exact: true }).fill('Orders');
    await page.getByLabel('Provider').fill('Acme');
    await page.getByLabel('Direction').selectOption('outbound');
    await page.getByLabel('Protocol').selectOption('http-api');
    await page.getByLabel('Live').check();
    await page.getByRole('button', { name: 'Add the Integration' }).click();
    await page.locator('#created').waitFor();
    await page.screenshot({ path: 'test-artifacts/console/journey-integration-created.png', fullPage: true });
    const snippet = (await page.locator('#created-snippet').textContent()) ?? '';
    const connectionId = (await page.locator('.created-connection').textContent()) ?? '';
    const ingestToken = configValue(snippet, 'INGEST_TOKEN');
    expect(ingestToken).toMatch(/^svc_ing_/);
    expect(await page.locator('#created-token').textContent()).toBe(ingestToken);
    await page.getByRole('button', { name: 'Copy configuration' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
    const { rows: connections } = await ctx.deps.pool.query<{ mode: string; integration_id: string; environment_id: string }>(
      'SELECT mode, integration_id, environment_id FROM connections WHERE id = $1',
      [connectionId],
    );
    expect(connections.map((row) => row.mode)).toEqual(['live']);
    // Shown once: the page has it no more.
    await openConsolePage(page, `${management.url}/console/workspaces/${slug}/integrations`, 'journey-integrations');
    expect(await page.content()).not.toContain(ingestToken);
    const live = page.locator(`.slot[data-connection="${connectionId}"]`);
    expect(await live.locator('.credential-status').textContent()).toBe('active');

    // A contract imported (pasted) and activated after its review.
    await Promise.all([page.waitForEvent('load'), live.getByRole('link', { name: 'Contracts' }).click()]);
    await settleConsolePage(page, 'journey-contracts-empty');
    await page.getByLabel('Version label').fill('1.0.0');
    await page.getByLabel('Or paste it').fill(JSON.stringify(ORDERS_DOCUMENT));
    await Promise.all([page.waitForURL(/\/contracts\/cv_/), page.getByRole('button', { name: 'Import as a draft' }).click()]);
    await settleConsolePage(page, 'journey-contract-review');
    expect(await page.locator('#precondition').textContent()).toContain('No version is active now');
    await page.getByRole('button', { name: 'Activate 1.0.0' }).click();
    await page.locator('#activated').waitFor();

    // Drifted orders sent with the copied configuration open an incident, shown with its findings.
    const collector: Collector = {
      accountId: workspaces[0].account_id,
      integrationKey: configValue(snippet, 'INTEGRATION_KEY'),
      connectionKey: configValue(snippet, 'CONNECTION_KEY'),
      ingestToken,
      connectionId,
      workspaceIntegrationId: connections[0].integration_id,
      environmentId: connections[0].environment_id,
      mode: 'live',
      direction: 'outbound',
      protocol: 'http-api',
    };
    const sent = await sendEnvelopes({ url: edge.url, clock: ctx.deps.clock }, collector, driftedOrderEnvelopes(collector));
    expect(sent.status, sent.text).toBe(202);
    const incidentId = await waitFor(
      async () =>
        (
          await ctx.deps.pool.query<{ id: string }>(
            `SELECT id FROM incidents WHERE connection_id = $1 AND kind = 'schema-drift' AND status = 'open' AND affected_records = $2`,
            [connectionId, DRIFTED_ORDERS.length],
          )
        ).rows[0]?.id,
      30_000,
      'the schema-drift incident with every drifted observation',
    );
    await openConsolePage(page, `${management.url}/console/workspaces/${slug}/incidents?integration=${connectionId}`, 'journey-incidents');
    await Promise.all([page.waitForEvent('load'), page.locator(`tr.incident[data-incident="${incidentId}"]`).getByRole('link').click()]);
    await settleConsolePage(page, 'journey-incident');
    expect(await page.locator('h1').textContent()).toBe('Schema drift');
    const findings = await page.locator('tr.finding').evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-kind')));
    expect(findings.sort()).toEqual(['required_field_missing', 'type_mismatch', 'undeclared_field', 'undeclared_field']);

    // The CLI's device code, approved on the consent page by this signed-in user; its token works.
    const iw = await loginIw(management.url, '', {
      approve: async (userCode) => {
        await openConsolePage(page, `${management.url}/device?user_code=${encodeURIComponent(userCode)}`, 'journey-device-consent');
        expect(await page.locator('header .email').textContent()).toBe(email);
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.locator('#approved').waitFor();
        await page.screenshot({ path: 'test-artifacts/console/journey-device-approved.png', fullPage: true });
      },
    });
    const whoami = await runIw(['whoami', '--json'], iw);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout).user.name).toBe('Grace Journey');
    const incidents = await runIw(['--workspace', slug, 'incidents', 'list', '--integration', connectionId, '--json'], iw);
    expect(incidents.code, incidents.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(incidents.stdout))).toContain(incidentId);

    noProblems(browser.problems());
  }, 180_000);
});
