import { describe, expect, it } from 'vitest';
import { convertSwagger } from '../shared/contracts/swaggerConversion.js';

// Swagger 2.0: an operation's `produces` replaces the document's (the converter line that supports
// Node 20 reads them the other way round; shared/contracts/swaggerConversion.ts).

const document = {
  swagger: '2.0',
  info: { title: 'Orders', version: '1' },
  produces: ['application/xml'],
  paths: {
    '/orders/{id}': {
      get: {
        produces: ['application/json'],
        responses: { 200: { description: 'ok', schema: { type: 'object', properties: { id: { type: 'string' } } } } },
      },
      delete: { responses: { 202: { description: 'queued', schema: { type: 'object' } }, 404: { $ref: '#/responses/NotFound' } } },
    },
  },
  responses: { NotFound: { description: 'missing', schema: { type: 'object' } } },
};

const contentTypes = (response: unknown) => Object.keys((response as { content: Record<string, unknown> }).content);

describe('convertSwagger', () => {
  it("uses an operation's own produces, the document's for the others and for shared responses", () => {
    const sent = structuredClone(document);
    const converted = convertSwagger(sent) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { responses: Record<string, unknown> };
    };
    expect(sent).toEqual(document);
    expect(contentTypes(converted.paths['/orders/{id}'].get.responses['200'])).toEqual(['application/json']);
    expect(contentTypes(converted.paths['/orders/{id}'].delete.responses['202'])).toEqual(['application/xml']);
    expect(converted.paths['/orders/{id}'].delete.responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
    expect(contentTypes(converted.components.responses.NotFound)).toEqual(['application/xml']);
  });
});
