import { appendFileSync, mkdirSync } from 'node:fs';
import { basename } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { expect } from 'vitest';
import { CONSOLE_CSP } from '../../management/console/securityHeaders.js';

/** Where the browser tests save a screenshot of every console page (README "Tests"). */
export const CONSOLE_ARTIFACTS = 'test-artifacts/console';
/** One JSON line per page load: the figures bench/RESULTS.md reports ("Console pages"). */
export const CONSOLE_TIMINGS = `${CONSOLE_ARTIFACTS}/timings.jsonl`;

/** One console page load as the browser measured it. */
export interface ConsolePageTiming {
  page: string;
  /** The management plane's own time (its `Server-Timing: app`). */
  serverMs: number;
  /** Request sent to the first byte of the answer. */
  firstByteMs: number;
  /** Navigation start to the end of the load event. */
  loadMs: number;
  test: string;
}

/**
 * After a load (by `goto`, or by the page's script following a form): checks that every control
 * has an accessible name, records the page's server time, first byte and load time, prints them,
 * and saves a full-page screenshot as `<name>.png`. The figures are reported, never asserted
 * (they are benchmarks).
 */
export async function settleConsolePage(page: Page, name: string): Promise<ConsolePageTiming> {
  await page.waitForLoadState('load');
  const measured = await page.evaluate(() => {
    const [entry] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
    return {
      serverMs: entry.serverTiming.find((timing) => timing.name === 'app')?.duration ?? Number.NaN,
      firstByteMs: entry.responseStart - entry.requestStart,
      loadMs: entry.loadEventEnd - entry.startTime,
    };
  });
  // Labelled for screen readers: every control and button of the page has an accessible name.
  expect(await unnamedControls(page), `${name}: controls without an accessible name`).toEqual([]);
  const timing: ConsolePageTiming = { page: name, ...measured, test: basename(expect.getState().testPath ?? '') };
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
  appendFileSync(CONSOLE_TIMINGS, `${JSON.stringify(timing)}\n`);
  console.log(
    `[console page] ${name}: server ${timing.serverMs.toFixed(1)} ms, first byte ${timing.firstByteMs.toFixed(1)} ms, load ${timing.loadMs.toFixed(1)} ms`,
  );
  await page.screenshot({ path: `${CONSOLE_ARTIFACTS}/${name}.png`, fullPage: true });
  return timing;
}

/**
 * The visible form controls and buttons of the page that have no accessible name (a `<label>`,
 * `aria-label` or `aria-labelledby`, or a button's own text), described by tag and id or name.
 */
export function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('input:not([type="hidden"]), select, textarea, button')]
      .filter((element) => {
        const field = element as HTMLInputElement;
        const named =
          (field.labels?.length ?? 0) > 0
          || element.getAttribute('aria-label')?.trim()
          || element.getAttribute('aria-labelledby')?.trim()
          || (element.tagName === 'BUTTON' && element.textContent?.trim());
        return !named;
      })
      .map((element) => `${element.tagName.toLowerCase()}#${element.id || (element as HTMLInputElement).name || '?'}`),
  );
}

/** Opens `url`: a 200 HTML page with the console's Content-Security-Policy; then `settleConsolePage`. */
export async function openConsolePage(page: Page, url: string, name: string): Promise<Response> {
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(200);
  expect(response!.headers()['content-type'], url).toBe('text/html; charset=utf-8');
  expect(response!.headers()['content-security-policy'], url).toBe(CONSOLE_CSP);
  expect(response!.headers()['server-timing'], url).toMatch(/^app;dur=\d+\.\d$/);
  await settleConsolePage(page, name);
  return response!;
}
