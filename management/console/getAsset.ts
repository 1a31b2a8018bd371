import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Asset, type AssetName, assetPath } from './assets.js';

/** RFC 9110 §13.1.2: `If-None-Match` lists tags (weak comparison) or is `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

/**
 * GET /assets/<name>, one route per file of assets.ts, with the file's own Content-Type (any other
 * name is the router's 404 `not_found`). Revalidated on every use (`no-cache` and a strong ETag:
 * 304 while unchanged), so a deploy's new script reaches the next page load; the routes are
 * `noStore: false` for that (plugins/noStore.ts), and not in the API reference (`hide`).
 */
export default function getAssetRoutes(app: FastifyInstance, assets: ReadonlyMap<AssetName, Asset>): void {
  for (const [name, asset] of assets) {
    app.get(
      assetPath(name),
      {
        config: { noStore: false, errors: [] },
        schema: { hide: true, querystring: { type: 'object', additionalProperties: false, properties: {} } },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        reply.header('Cache-Control', 'no-cache').header('ETag', asset.etag).type(asset.contentType);
        if (matchesEtag(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
        return reply.send(asset.body);
      },
    );
  }
}
