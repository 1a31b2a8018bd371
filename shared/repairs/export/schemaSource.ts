// Where, in the document a user registered, the importer read one operation's payload schema and
// each of its `$defs` (shared/contracts/importOpenApi.ts, importJsonSchema.ts, schemaSubset.ts):
// the places an exported Overlay edits. Swagger 2.0 documents are imported through their OpenAPI
// 3.0 conversion (swaggerConversion.ts), but the Overlay applies to the document as sent, so the
// walk reads Swagger's own layout (`responses.<s>.schema`, the `in: body` parameter,
// `definitions`).

import { isJsonMediaType } from '../../contracts/importOpenApi.js';
import { fragmentRef, isPlainObject, parseReference, resolveTokens, unescapeToken } from '../../contracts/jsonPointer.js';
import { normalizeStatusSelector } from '../../contracts/operationKey.js';
import { compare } from '../../contracts/schemaSubset.js';
import { SHARED_NAME_PREFIX } from '../../contracts/sharedSubschemas.js';
import { AppError } from '../../errors/index.js';
import type { RepairBundleInput } from './types.js';

/** What a document's schemas can say, as far as writing the patched subset back goes. */
export interface SchemaDialect {
  name: 'openapi-3.0' | 'openapi-3.1' | 'swagger-2.0' | 'json-schema';
  /** `type` may be an array (OpenAPI 3.1, JSON Schema). */
  typeArrays: boolean;
  /** "or null" is written `nullable: true` (OpenAPI 3.0). */
  nullable: boolean;
  /** Members beside a `$ref` apply (OpenAPI 3.1, JSON Schema 2019-09 and later). */
  refSiblings: boolean;
}

export interface SchemaSource {
  document: Record<string, unknown>;
  dialect: SchemaDialect;
  /** Tokens of the operation's payload schema in the document. */
  root: string[];
  /** Tokens of the definition the stored schema keeps as `$defs/<name>`; throws when it has no place in the document. */
  definition(name: string): string[];
  /** The `$ref` value naming `tokens` in the document. */
  reference(tokens: readonly string[]): string;
}

// Drafts up to 07 ignore every member beside `$ref` (importJsonSchema.ts reads `$schema` the same way).
const SIBLINGS_IGNORED_DRAFT = /^https?:\/\/json-schema\.org\/draft-0[3-7]\/schema#?$/;
const MAX_REFERENCE_HOPS = 32;

export function unsupported(): AppError {
  return new AppError('repair_export_operation_unsupported');
}

export function schemaSource(contract: RepairBundleInput['contract'], operation: RepairBundleInput['operation']): SchemaSource {
  const document = contract.document;
  if (contract.format === 'json-schema') {
    const declared = document.$schema;
    const dialect: SchemaDialect = {
      name: 'json-schema',
      typeArrays: true,
      nullable: false,
      refSiblings: !(typeof declared === 'string' && SIBLINGS_IGNORED_DRAFT.test(declared)),
    };
    return source(document, dialect, [], ['$defs']);
  }
  if (Object.hasOwn(document, 'swagger')) {
    const dialect: SchemaDialect = { name: 'swagger-2.0', typeArrays: false, nullable: false, refSiblings: false };
    return source(document, dialect, swaggerRoot(document, operation), ['definitions']);
  }
  const is31 = typeof document.openapi === 'string' && document.openapi.startsWith('3.1');
  const dialect: SchemaDialect = is31
    ? { name: 'openapi-3.1', typeArrays: true, nullable: false, refSiblings: true }
    : { name: 'openapi-3.0', typeArrays: false, nullable: true, refSiblings: false };
  return source(document, dialect, openApiRoot(document, operation), ['components', 'schemas']);
}

function source(document: Record<string, unknown>, dialect: SchemaDialect, root: string[], container: string[]): SchemaSource {
  return {
    document,
    dialect,
    root,
    definition: (name) => {
      const tokens = definitionTokens(name, container, dialect);
      if (tokens === null || resolveTokens(document, tokens) === undefined) throw unsupported();
      return tokens;
    },
    reference: (tokens) => fragmentRef(tokens),
  };
}

/**
 * schemaSubset.ts names a definition by its own name when it is a member of the named container
 * and by its whole pointer otherwise; the names of sub-schemas it moved to share them
 * (sharedSubschemas.ts) have no place in the document.
 */
function definitionTokens(name: string, container: string[], dialect: SchemaDialect): string[] | null {
  if (name.startsWith(SHARED_NAME_PREFIX)) return null;
  if (!name.startsWith('/')) return dialect.name === 'swagger-2.0' ? ['definitions', name] : [...container, name];
  const tokens = name.slice(1).split('/').map(unescapeToken);
  return dialect.name === 'swagger-2.0' ? swaggerTokens(tokens) : tokens;
}

/** A pointer into the OpenAPI 3.0 conversion of a Swagger 2.0 document, mapped back to the document. */
function swaggerTokens(tokens: string[]): string[] | null {
  if (tokens[0] === 'components' && tokens[1] === 'schemas') return ['definitions', ...tokens.slice(2)];
  // A response's schema is copied under every media type it produces.
  const content = tokens.indexOf('content');
  if (content > 0 && tokens[content + 2] === 'schema') {
    const response = tokens.slice(0, content);
    const rest = tokens.slice(content + 3);
    if (response[0] === 'components' && response[1] === 'responses' && response.length === 3)
      return ['responses', response[2], 'schema', ...rest];
    if (response[0] === 'paths' && response[3] === 'responses' && response.length === 5) return [...response, 'schema', ...rest];
  }
  return null;
}

interface Located {
  node: unknown;
  tokens: string[];
}

/** Follows local `$ref`s of path items, request bodies, responses and parameters (as the importer does). */
function resolve(document: Record<string, unknown>, tokens: string[]): Located {
  let at = tokens;
  let node = resolveTokens(document, at);
  for (let hops = 0; isPlainObject(node) && Object.hasOwn(node, '$ref'); hops++) {
    const ref = node.$ref;
    const parsed = typeof ref === 'string' ? parseReference(ref) : null;
    if (parsed?.kind !== 'local' || parsed.pointer === '' || hops >= MAX_REFERENCE_HOPS) throw unsupported();
    at = parsed.tokens;
    node = resolveTokens(document, at);
  }
  if (!isPlainObject(node)) throw unsupported();
  return { node, tokens: at };
}

function operationOf(document: Record<string, unknown>, container: string, operation: RepairBundleInput['operation']): Located {
  const holder = document[container];
  if (!isPlainObject(holder) || !Object.hasOwn(holder, operation.routeTemplate)) throw unsupported();
  const pathItem = resolve(document, [container, operation.routeTemplate]);
  const method = operation.method.toLowerCase();
  if (!Object.hasOwn(pathItem.node as Record<string, unknown>, method)) throw unsupported();
  return { node: (pathItem.node as Record<string, unknown>)[method], tokens: [...pathItem.tokens, method] };
}

/** The response the importer took for a status selector: the first code in sorted order that normalises to it. */
function responseOf(document: Record<string, unknown>, operation: Located, statusSelector: string): Located {
  const responses = isPlainObject(operation.node) ? operation.node.responses : undefined;
  if (!isPlainObject(responses)) throw unsupported();
  const code = Object.keys(responses)
    .sort(compare)
    .find((key) => !key.startsWith('x-') && normalizeStatusSelector(key) === statusSelector);
  if (code === undefined) throw unsupported();
  return resolve(document, [...operation.tokens, 'responses', code]);
}

/** `application/json`, else the first `application/*+json` in sorted order (importOpenApi.ts). */
function schemaOfContent(holder: Located): string[] {
  const content = (holder.node as Record<string, unknown>).content;
  if (!isPlainObject(content)) throw unsupported();
  const json = Object.keys(content).sort(compare).filter(isJsonMediaType);
  const chosen = json.find((mediaType) => mediaType.split(';')[0].trim().toLowerCase() === 'application/json') ?? json[0];
  const media = chosen === undefined ? undefined : content[chosen];
  if (!isPlainObject(media) || !Object.hasOwn(media, 'schema')) throw unsupported();
  return [...holder.tokens, 'content', chosen as string, 'schema'];
}

function openApiRoot(document: Record<string, unknown>, operation: RepairBundleInput['operation']): string[] {
  const container = operation.payloadLocation === 'message' ? 'webhooks' : 'paths';
  const located = operationOf(document, container, operation);
  if (operation.payloadLocation === 'response') return schemaOfContent(responseOf(document, located, operation.statusSelector));
  if (!isPlainObject(located.node) || !Object.hasOwn(located.node, 'requestBody')) throw unsupported();
  return schemaOfContent(resolve(document, [...located.tokens, 'requestBody']));
}

function swaggerRoot(document: Record<string, unknown>, operation: RepairBundleInput['operation']): string[] {
  if (operation.payloadLocation === 'message') throw unsupported();
  const located = operationOf(document, 'paths', operation);
  if (operation.payloadLocation === 'response') {
    const response = responseOf(document, located, operation.statusSelector);
    if (!Object.hasOwn(response.node as Record<string, unknown>, 'schema')) throw unsupported();
    return [...response.tokens, 'schema'];
  }
  // The body parameter of the operation, else the one its path item declares for every operation.
  const pathItemTokens = located.tokens.slice(0, -1);
  for (const holder of [located.tokens, pathItemTokens]) {
    const parameters = resolveTokens(document, [...holder, 'parameters']);
    if (!Array.isArray(parameters)) continue;
    for (let index = 0; index < parameters.length; index++) {
      const parameter = resolve(document, [...holder, 'parameters', String(index)]);
      const node = parameter.node as Record<string, unknown>;
      if (node.in === 'body' && Object.hasOwn(node, 'schema')) return [...parameter.tokens, 'schema'];
    }
  }
  throw unsupported();
}
