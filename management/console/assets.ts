import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The console's static files, served by the management plane itself (no CDN: the pages'
 * Content-Security-Policy allows `'self'` only). They are plain files kept beside this module in
 * `assets/`, not compiled: the compiled module reads them from the source tree, as the migrations are.
 */
const ASSET_TYPES = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'device.js': 'text/javascript; charset=utf-8',
  'send-json.js': 'text/javascript; charset=utf-8',
  'icon.svg': 'image/svg+xml',
} as const;

export type AssetName = keyof typeof ASSET_TYPES;

export interface Asset {
  body: Buffer;
  contentType: string;
  /** A strong validator: the browser revalidates (`no-cache`) and gets a 304 while the file is unchanged. */
  etag: string;
}

const here = fileURLToPath(new URL('.', import.meta.url));
const ASSETS_DIR = import.meta.url.includes('/dist/') ? resolve(here, '../../../management/console/assets') : resolve(here, 'assets');

/** Where a page links an asset. */
export function assetPath(name: AssetName): string {
  return `/assets/${name}`;
}

/** Every asset, read once when the console registers (a missing file fails the start, not a request). */
export async function loadAssets(): Promise<ReadonlyMap<AssetName, Asset>> {
  const assets = new Map<AssetName, Asset>();
  for (const [name, contentType] of Object.entries(ASSET_TYPES) as [AssetName, string][]) {
    const body = await readFile(resolve(ASSETS_DIR, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { body, contentType, etag });
  }
  return assets;
}
