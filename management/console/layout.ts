import { html, type SafeHtml } from './html.js';
import { assetPath, type AssetName } from './assets.js';
import { errorTemplate, formError } from './consoleForm.js';
import { WORKSPACE_NAV } from './consoleNav.js';

/**
 * The frame of a standalone page (the device page, sign-in, sign-up, e-mail verification): its own
 * stylesheet and script from `/assets/…` (the page's Content-Security-Policy allows nothing else:
 * securityHeaders.ts), no inline script or style, the content in one card.
 */
export function layout(page: { title: string; script?: AssetName; body: SafeHtml }): string {
  return document(
    page.title,
    page.script,
    html`<main class="card">
${page.body}
</main>`,
  );
}

function document(title: string, script: AssetName | undefined, body: SafeHtml, pageScript?: AssetName): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · integration-watch</title>
<link rel="icon" href="${assetPath('icon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assetPath('console.css')}">
${script ? html`<script type="module" src="${assetPath(script)}"></script>` : null}
${pageScript ? html`<script type="module" src="${assetPath(pageScript)}"></script>` : null}
</head>
<body>
${body}
</body>
</html>
`.markup;
}

/** A workspace as the console's header lists it. */
export interface LayoutWorkspace {
  slug: string;
  name: string;
  status: 'active' | 'archived';
}

/** What the frame of a signed-in page shows: who, which workspace, and where in it. */
export interface ConsolePageFrame {
  title: string;
  email: string;
  /** The user's workspaces, for the switcher. */
  workspaces: readonly LayoutWorkspace[];
  /** The workspace the page is about, if any: its navigation is shown. */
  workspace?: LayoutWorkspace;
  /** The `WORKSPACE_NAV` path of the page, marked current. */
  nav?: string;
  /** A script of the page's own beside `console.js` (the device page's `device.js`). */
  script?: AssetName;
  body: SafeHtml;
}

/** The address of a workspace's console page. */
export function workspacePagePath(slug: string, path: string): string {
  return `/console/workspaces/${encodeURIComponent(slug)}/${path}`;
}

function switcher(frame: ConsolePageFrame): SafeHtml {
  const current = frame.workspace;
  const items = frame.workspaces.map(
    (workspace) =>
      html`<li><a href="${workspacePagePath(workspace.slug, WORKSPACE_NAV[0].path)}"${workspace.slug === current?.slug ? html` aria-current="true"` : null}>${workspace.name}${workspace.status === 'archived' ? html` <span class="badge">archived</span>` : null}</a></li>`,
  );
  return html`<details class="switcher">
<summary>${current ? current.name : 'Workspaces'}</summary>
<ul>
${items}
<li><a href="/">All workspaces</a></li>
</ul>
</details>`;
}

function workspaceNav(frame: ConsolePageFrame): SafeHtml | null {
  const workspace = frame.workspace;
  if (!workspace) return null;
  const links = WORKSPACE_NAV.map(
    (item) =>
      html`<li><a href="${workspacePagePath(workspace.slug, item.path)}"${item.path === frame.nav ? html` aria-current="page"` : null}>${item.label}</a></li>`,
  );
  return html`<nav class="workspace-nav" aria-label="${workspace.name}"><ul>${links}</ul></nav>`;
}

/**
 * The frame of a signed-in console page: a header with the product, the workspace switcher, the
 * signed-in user and sign-out; the current workspace's navigation; the page. Every page uses
 * `console.js` (forms, local times).
 */
export function consoleLayout(frame: ConsolePageFrame): string {
  return document(
    frame.title,
    'console.js',
    html`<header class="top">
<a class="brand" href="/">integration-watch</a>
${switcher(frame)}
<form id="sign-out" class="user" data-api="POST /auth/logout" data-next="/">
<span class="email">${frame.email}</span>
<button type="submit" class="link">Sign out</button>
${formError('sign-out')}
${errorTemplate([])}
</form>
</header>
${workspaceNav(frame)}
<main class="page">
<h1>${frame.title}</h1>
${frame.body}
</main>`,
    frame.script,
  );
}
