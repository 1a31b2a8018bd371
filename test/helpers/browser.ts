import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';

/**
 * Debian's `chromium` package (scripts/stack.sh install puts it there); CHROMIUM_PATH names
 * another build. playwright-core drives it and downloads no browser of its own.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Something a page logged as an error, or threw without catching. */
export interface PageProblem {
  kind: 'console' | 'pageerror';
  text: string;
  /** The page's address when it happened. */
  url: string;
}

export interface TestBrowser {
  /**
   * A page in a context of its own (its own cookies), at phone width when `phone`; its console
   * errors and uncaught errors are collected into `problems()`.
   */
  newPage(options?: { phone?: boolean }): Promise<Page>;
  /** Every problem seen since the launch or the last `clearProblems()`, on every page. */
  problems(): PageProblem[];
  clearProblems(): void;
  /** Closes every context and the browser; kills the browser if it does not close within 10 s. */
  close(): Promise<void>;
}

const CLOSE_TIMEOUT_MS = 10_000;

/**
 * Headless Chromium for the page tests. Tests run as root, where Chromium's sandbox cannot start:
 * `--no-sandbox`, with pages from the loopback service only. The caller owns the browser and
 * closes it in `afterAll` (or `finally`); Playwright also kills it when the test process exits.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: run \`bash scripts/stack.sh install\` (as root) or set CHROMIUM_PATH`);
  }
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
    timeout: 30_000,
  });
  const contexts = new Set<BrowserContext>();
  let problems: PageProblem[] = [];
  return {
    async newPage(options = {}) {
      const context = await browser.newContext(
        options.phone ? { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {},
      );
      contexts.add(context);
      context.on('close', () => contexts.delete(context));
      const page = await context.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push({ kind: 'console', text: message.text(), url: page.url() });
      });
      page.on('pageerror', (error) => problems.push({ kind: 'pageerror', text: String(error), url: page.url() }));
      return page;
    },
    problems: () => [...problems],
    clearProblems() {
      problems = [];
    },
    async close() {
      await Promise.allSettled([...contexts].map((context) => context.close()));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), CLOSE_TIMEOUT_MS);
      });
      try {
        const outcome = await Promise.race([browser.close().then(() => 'closed' as const), timedOut]);
        // A second close of a browser that is still closing kills its process (playwright-core).
        if (outcome === 'timeout') await browser.close();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
