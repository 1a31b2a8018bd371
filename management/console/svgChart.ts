import { html, type SafeHtml } from './html.js';

export interface Bar {
  /** The bar's label under the axis (a day of the month). */
  label: string;
  /** The full description, for screen readers and the bar's tooltip. */
  title: string;
  value: number;
}

const HEIGHT = 160;
const BAR_WIDTH = 18;
const GAP = 6;
const AXIS = 22;
const TOP = 16;

/**
 * A bar chart as inline SVG markup, rendered on the server: no script and no chart library, and
 * nothing the page's Content-Security-Policy refuses (geometry and colour are attributes and
 * classes of console.css, never `style`). Every label and title goes through `html`.
 */
export function barChart(bars: readonly Bar[], caption: string): SafeHtml {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const width = Math.max(1, bars.length) * (BAR_WIDTH + GAP) + GAP;
  const plot = HEIGHT - AXIS - TOP;
  const rects = bars.map((bar, index) => {
    const x = GAP + index * (BAR_WIDTH + GAP);
    const h = bar.value === 0 ? 0 : Math.max(1, Math.round((bar.value / max) * plot));
    const y = TOP + plot - h;
    return html`<g class="bar"><title>${bar.title}</title><rect x="${x}" y="${y}" width="${BAR_WIDTH}" height="${h}"></rect>
<text class="value" x="${x + BAR_WIDTH / 2}" y="${y - 3}" text-anchor="middle">${bar.value > 0 ? String(bar.value) : ''}</text>
<text class="label" x="${x + BAR_WIDTH / 2}" y="${HEIGHT - 6}" text-anchor="middle">${bar.label}</text></g>`;
  });
  return html`<figure class="chart">
<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="chart-caption" viewBox="0 0 ${width} ${HEIGHT}" width="${width}" height="${HEIGHT}">
<line class="axis" x1="0" y1="${TOP + plot + 0.5}" x2="${width}" y2="${TOP + plot + 0.5}"></line>
${rects}
</svg>
<figcaption id="chart-caption">${caption}</figcaption>
</figure>`;
}
