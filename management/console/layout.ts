import { html, type SafeHtml } from './html.js';
import { assetPath, type AssetName } from './assets.js';

/**
 * The frame of every console page: its own stylesheet and script from `/assets/…` (the page's
 * Content-Security-Policy allows nothing else: securityHeaders.ts), no inline script or style.
 */
export function layout(page: { title: string; script?: AssetName; body: SafeHtml }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · integration-watch</title>
<link rel="icon" href="${assetPath('icon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assetPath('console.css')}">
${page.script ? html`<script type="module" src="${assetPath(page.script)}"></script>` : null}
</head>
<body>
<main class="card">
${page.body}
</main>
</body>
</html>
`.markup;
}
