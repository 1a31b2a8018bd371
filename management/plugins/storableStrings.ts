import type { FastifyInstance, FastifyRequest } from 'fastify';
import { childPointer } from '../../shared/contracts/jsonPointer.js';
import { isStorableText, toStorableText } from '../../shared/db/storableText.js';

interface Schema {
  type?: unknown;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  patternProperties?: unknown;
  items?: unknown;
}

const asSchema = (value: unknown): Schema | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Schema) : undefined;

/**
 * `{type: 'object'}` and nothing more: an open document that its route keeps as evidence and
 * checks itself, answering with a pointer into the document (contracts: `findUnstorableJson`).
 */
function isOpenDocument(schema: Schema | undefined): boolean {
  return schema?.type === 'object' && !schema.properties && !schema.additionalProperties && !schema.patternProperties;
}

/**
 * The JSON pointer of the first string or member name PostgreSQL cannot store, or null. The
 * schema only tells where open documents are; anywhere it says nothing, everything is checked.
 */
function findUnstorable(value: unknown, schema: Schema | undefined): string | null {
  const stack = [{ value, schema, pointer: '' }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (typeof item.value === 'string') {
      if (!isStorableText(item.value)) return item.pointer;
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null || isOpenDocument(item.schema)) continue;
    const isArray = Array.isArray(item.value);
    for (const [key, child] of Object.entries(item.value)) {
      const pointer = childPointer(item.pointer, key);
      if (!isStorableText(key)) return pointer;
      const childSchema = isArray
        ? asSchema(item.schema?.items)
        : (item.schema?.properties?.[key] ?? asSchema(item.schema?.additionalProperties));
      stack.push({ value: child, schema: childSchema, pointer });
    }
  }
  return null;
}

/** The error Fastify's schema validation would raise, so it maps exactly like one. */
function validationFailure(context: 'body' | 'querystring', pointer: string): NonNullable<FastifyRequest['validationError']> {
  const message = 'must not hold U+0000 or a lone surrogate';
  return Object.assign(new Error(`${context}${pointer} ${message}`), {
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    validation: [{ keyword: 'storableText', instancePath: pointer, schemaPath: '#', params: {}, message }],
    validationContext: context,
  });
}

/**
 * Strings PostgreSQL cannot store (U+0000, lone surrogates) never reach it (docs/decisions/api-conventions.md,
 * Foundation).
 * - A path parameter holding one names nothing stored. It is rewritten before any hook reads it
 *   into a value that names nothing either (U+FFFD for each such character), so each route
 *   answers as for an id of the wrong form, at its own place in the order of checks (401 first).
 * - A body or query string holding one fails validation: checked right after schema validation,
 *   reported as schema validation would report it, so it maps to the route's own 400 code (and to
 *   a field's code on routes that attach validation). Only parts with a schema are read by a route.
 */
export function registerStorableStrings(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const params = (request.params ?? {}) as Record<string, string>;
    for (const [name, value] of Object.entries(params)) {
      if (!isStorableText(value)) params[name] = toStorableText(value);
    }
  });

  app.addHook('preHandler', async (request) => {
    if (request.validationError) return; // the route answers its own validation failure first
    const { schema, attachValidation } = request.routeOptions;
    for (const [context, value] of [
      ['body', request.body],
      ['querystring', request.query],
    ] as const) {
      const partSchema = asSchema(schema?.[context]);
      const pointer = partSchema ? findUnstorable(value, partSchema) : null;
      if (pointer === null) continue;
      const failure = validationFailure(context, pointer);
      if (!attachValidation) throw failure;
      request.validationError = failure;
      return;
    }
  });
}
