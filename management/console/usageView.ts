import { localTime } from './consoleRoute.js';
import { html, type SafeHtml } from './html.js';
import { workspacePagePath } from './layout.js';
import { barChart } from './svgChart.js';
import type { CoveragePageData, UsagePageData } from './usagePage.js';

// One formatter made when the module loads: `toLocaleString` builds one per call, and the process's
// first one loads ICU's locale data (30–50 ms), which the first page shown would otherwise pay.
const NUMBER_FORMAT = new Intl.NumberFormat('en');
const number = (value: number) => NUMBER_FORMAT.format(value);

function dailyChart(daily: NonNullable<UsagePageData['daily']>): SafeHtml {
  const total = daily.days.reduce((sum, day) => sum + day.count, 0);
  const bars = daily.days.map((day) => ({
    label: String(Number(day.start.slice(8, 10))),
    title: `${day.start.slice(0, 10)}: ${number(day.count)} observations`,
    value: day.count,
  }));
  return html`<section class="daily">
<h3>Observations per day</h3>
<p class="hint">Connection <code class="connection-id">${daily.connectionId}</code>: <strong class="daily-total">${number(total)}</strong> observations this month (UTC days).</p>
<div class="chart-scroll">${barChart(bars, `Accepted observations per UTC day of this month, connection ${daily.connectionId}`)}</div>
</section>`;
}

/** The month's usage, and one connection's daily chart when one is chosen. */
export function usageBody(data: UsagePageData): SafeHtml {
  const { slug } = data.workspace;
  const { usage } = data;
  const sandbox = usage.sandbox;
  return html`<h2>${usage.period}</h2>
<p class="hint">Counted from ${localTime(usage.periodStart)}; resets at ${localTime(usage.resetAt)}.</p>
<dl class="usage">
<dt>Sandbox observations (this workspace)</dt><dd class="sandbox-total">${number(sandbox.workspaceTotal)}</dd>
<dt>Sandbox observations (whole account)</dt><dd>${number(sandbox.accountTotal)} of ${number(sandbox.limit)} (${number(sandbox.remaining)} left${sandbox.quotaEnforced ? '' : ', not enforced'})</dd>
<dt>Live observations (this workspace)</dt><dd class="live-total">${number(usage.live.workspaceTotal)}</dd>
</dl>
<meter min="0" max="${sandbox.limit}" value="${Math.min(sandbox.accountTotal, sandbox.limit)}" aria-label="Sandbox allowance used">${number(sandbox.accountTotal)}</meter>
${data.daily ? dailyChart(data.daily) : html`<p class="hint">Open a connection's Usage link on the <a href="${workspacePagePath(slug, 'integrations')}">Integrations</a> page for its observations per day.</p>`}`;
}

/** One connection's field coverage per operation of its active contract. */
export function coverageBody(data: CoveragePageData): SafeHtml {
  const { coverage } = data;
  const operations =
    coverage.contractVersionId === null
      ? html`<p class="empty">No active contract: coverage is measured against the active contract's declared fields.</p>`
      : coverage.operations.map(
          (operation) => html`<section class="operation" data-operation="${operation.operationKey}">
<h2><code>${operation.operationKey}</code></h2>
<p>${number(operation.observations)} observations (${number(operation.inspectedObservations)} inspected); ${number(operation.declaredProperties)} declared fields, <strong class="unobserved-count">${number(operation.unobservedProperties.length)}</strong> never observed${operation.truncated ? ' (lists cut)' : ''}.</p>
${operation.unobservedProperties.length > 0 ? html`<h3>Never observed</h3><ul class="unobserved">${operation.unobservedProperties.map((pointer) => html`<li><code>${pointer || '/'}</code></li>`)}</ul>` : null}
${operation.uncheckedProperties.length > 0 ? html`<h3>Not checked by the contract</h3><ul class="unchecked">${operation.uncheckedProperties.map((pointer) => html`<li><code>${pointer || '(whole payload)'}</code></li>`)}</ul>` : null}
</section>`,
        );
  return html`<p class="hint">Connection <code class="connection-id">${coverage.connectionId}</code>, contract ${coverage.contractVersionId ? html`<code>${coverage.contractVersionId}</code>` : 'none'}, from ${localTime(coverage.from)} to ${localTime(coverage.to)}.</p>
<p class="hint">Optional fields that never appear let validation pass without checking anything: they are listed here.</p>
${operations}`;
}
