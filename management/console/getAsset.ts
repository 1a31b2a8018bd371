import type { FastifyInstance } from 'fastify';
import { AppError } from '../../shared/errors/index.js';
import { type Asset, type AssetName, isAssetName } from './assets.js';

/** RFC 9110 §13.1.2: `If-None-Match` lists tags (weak comparison) or is `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

interface Params {
  name: string;
}

/**
 * GET /assets/:name → one of the console's static files with its own Content-Type, or 404
 * `not_found`. Revalidated on every use (`no-cache` and a strong ETag: 304 while unchanged), so a
 * deploy's new script reaches the next page load; the route is `noStore: false` for that
 * (plugins/noStore.ts), and not in the API reference (`hide`).
 */
export default function getAssetRoute(app: FastifyInstance, assets: ReadonlyMap<AssetName, Asset>): void {
  app.get<{ Params: Params }>(
    '/assets/:name',
    {
      config: { noStore: false, errors: ['not_found'] },
      schema: {
        hide: true,
        params: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string', maxLength: 64 } },
        },
        querystring: { type: 'object', additionalProperties: false, properties: {} },
      },
    },
    async (request, reply) => {
      const asset = isAssetName(request.params.name) ? assets.get(request.params.name) : undefined;
      if (!asset) throw new AppError('not_found');
      reply.header('Cache-Control', 'no-cache').header('ETag', asset.etag).type(asset.contentType);
      if (matchesEtag(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
      return reply.send(asset.body);
    },
  );
}
