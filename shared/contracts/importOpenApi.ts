// Imports an OpenAPI 3.0/3.1 document into contract operations (01 "Register", "Import rules";
// 00-decisions §4). `http-api` reads `paths` (request bodies → `request`, responses →
// `response`); `http-webhook` reads `webhooks` (request bodies → `message`, 03 transport table).
// Every declared payload becomes an operation (00-decisions §7): what lies outside the subset
// (`oneOf`, remote references, non-JSON or missing content, …) is left unchecked in it and
// listed in `skipped` with its pointer; only what cannot be an operation at all (an invalid
// status code, a method outside 01 Limits, a duplicate) is left out. A document without any
// operation is refused.

import { canonicalFingerprint, canonicalJson } from '../fingerprint.js';
import { invalidContract } from './invalidContract.js';
import { childPointer, isPlainObject, parseReference, resolveTokens } from './jsonPointer.js';
import { ANY_STATUS_SELECTOR, normalizeStatusSelector, operationKey, quote } from './operationKey.js';
import { compare, SchemaCompiler } from './schemaSubset.js';
import { serverBasePaths } from './serverBasePaths.js';
import { convertSwagger } from './swaggerConversion.js';
import {
  OPERATION_METHODS,
  type ImportedOperation,
  type OpenApiImportResult,
  type OperationMethod,
  type PayloadLocation,
  type SkippedPayload,
  type UncheckedSubschema,
} from './types.js';

export type OpenApiProtocol = 'http-api' | 'http-webhook';

const SUPPORTED_VERSION = /^3\.([01])(\.[0-9]+)?(-[0-9A-Za-z.-]+)?$/;
const PATH_ITEM_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query']);
// UTF-8 bytes of the canonical JSON of every operation's schema, summed: about 9 times the
// corpus's largest (Discord's).
export const MAX_IMPORT_SCHEMA_BYTES = 8 * 1024 * 1024;
// A chain of `$ref`s between path items, request bodies or responses longer than this is a loop.
const MAX_REFERENCE_HOPS = 32;

interface Site {
  payloadLocation: PayloadLocation;
  statusSelector: string;
  /** Pointer of the request body or response object that declares `content`. */
  pointer: string;
  content: unknown;
  /** Set for the payload of an operation that declares none: why it is unchecked. */
  undeclared?: string;
}

type Resolved = { node: unknown; pointer: string } | { skipped: SkippedPayload };

export function importOpenApi(document: unknown, protocol: OpenApiProtocol): OpenApiImportResult {
  if (protocol !== 'http-api' && protocol !== 'http-webhook') {
    throw invalidContract('OpenAPI documents can be registered only for http-api and http-webhook Integrations', ['']);
  }
  if (!isPlainObject(document)) throw invalidContract('the document is not a JSON object', ['']);
  if (Object.hasOwn(document, 'swagger')) {
    if (document.swagger !== '2.0') {
      throw invalidContract(
        `Swagger ${describe(document.swagger)} documents are not supported; supported versions are Swagger 2.0 and OpenAPI 3.0.x and 3.1.x`,
        ['/swagger'],
      );
    }
    // Converted by @scalar/openapi-upgrader (docs/decisions/contracts.md; swaggerConversion.ts), which
    // rewrites its input: copies are converted, the document sent stays the stored evidence.
    // Pointers of what is left out point into the OpenAPI 3.0 conversion.
    let converted: unknown;
    try {
      converted = convertSwagger(document);
    } catch {
      // The converter's own message depends on the order it meets members in: not repeated, so the
      // answer is the same for the same document.
      throw invalidContract('the Swagger 2.0 document could not be converted to OpenAPI 3.0 (it does not follow Swagger 2.0)', ['']);
    }
    return { ...importOpenApi(converted, protocol), openapiVersion: '2.0' };
  }
  if (!Object.hasOwn(document, 'openapi')) {
    throw invalidContract('the document has no openapi version; supported versions are 3.0.x and 3.1.x', ['']);
  }
  const version = document.openapi;
  const match = typeof version === 'string' ? SUPPORTED_VERSION.exec(version) : null;
  if (typeof version !== 'string' || match === null) {
    throw invalidContract(`unsupported OpenAPI version ${describe(version)}; supported versions are 3.0.x and 3.1.x`, ['/openapi']);
  }
  const source = protocol === 'http-api' ? 'paths' : 'webhooks';
  if (!Object.hasOwn(document, source)) {
    throw invalidContract(`the document has no ${source}; ${protocol} operations are read from ${source}`, ['']);
  }
  const container = document[source];
  if (!isPlainObject(container)) throw invalidContract(`${source} is not an object`, [`/${source}`]);

  const importer = new OpenApiImporter(document, protocol, match[1] === '1');
  for (const name of Object.keys(container).sort(compare)) importer.importPathItem(name, container[name], childPointer(`/${source}`, name));
  const result = importer.result(version);
  if (result.operations.length === 0) {
    if (result.skipped.length === 0) {
      throw invalidContract(`no importable operations: no entry of ${source} declares an operation`, [`/${source}`]);
    }
    const pointers = [...new Set(result.skipped.map((entry) => entry.pointer))];
    throw invalidContract(
      `no importable operations: ${result.skipped.length} payload(s) left out, first: ${result.skipped[0].reason}`,
      pointers,
    );
  }
  return result;
}

class OpenApiImporter {
  private readonly operations = new Map<string, ImportedOperation>();
  private readonly skipped = new Map<string, SkippedPayload>();
  private readonly schemas: SchemaCompiler;
  private schemaBytes = 0;
  /** The document's `servers` base paths, read when an operation first needs them. */
  private documentBasePaths: string[] | undefined;

  constructor(
    private readonly document: Record<string, unknown>,
    private readonly protocol: OpenApiProtocol,
    isVersion31: boolean,
  ) {
    this.schemas = new SchemaCompiler(document, {
      refSiblingsApply: isVersion31,
      rootIsSchema: false,
      namedContainer: ['components', 'schemas'],
      leaveUnchecked: true,
    });
  }

  result(openapiVersion: string): OpenApiImportResult {
    return {
      openapiVersion,
      operations: [...this.operations.values()].sort((a, b) => compare(a.operationKey, b.operationKey)),
      skipped: [...this.skipped.values()].sort((a, b) => compare(a.pointer, b.pointer) || compare(a.reason, b.reason)),
      steps: this.schemas.steps,
    };
  }

  importPathItem(name: string, value: unknown, pointer: string): void {
    if (this.protocol === 'http-api') {
      if (name.startsWith('x-')) return;
      // 03 transport rule 2: an HTTP routeTemplate is an absolute path without a query string.
      if (!name.startsWith('/') || /[?#]/.test(name)) {
        this.skip(pointer, `invalid path ${quote(name)} (not an absolute path without query)`);
        return;
      }
    } else if (name === '') {
      this.skip(pointer, 'invalid webhook name (empty)');
      return;
    }
    const resolved = this.resolve(value, pointer);
    if ('skipped' in resolved) {
      this.skip(resolved.skipped.pointer, resolved.skipped.reason);
      return;
    }
    const pathItem = resolved.node;
    if (!isPlainObject(pathItem)) {
      this.skip(resolved.pointer, 'invalid path item (not an object)');
      return;
    }
    let pathBasePaths: string[] | undefined;
    for (const key of Object.keys(pathItem).sort(compare)) {
      if (!PATH_ITEM_METHODS.has(key)) continue;
      pathBasePaths ??= this.basePathsAt(pathItem, childPointer(resolved.pointer, 'servers')) ?? this.basePathsOfDocument();
      this.importOperation(name, key.toUpperCase(), pathItem[key], childPointer(resolved.pointer, key), pathBasePaths);
    }
  }

  /**
   * The base paths of `servers` on this object, or null when it declares none. Webhooks have
   * none: their names are not paths and `servers` describe the vendor's API, not the receiver.
   */
  private basePathsAt(holder: Record<string, unknown>, pointer: string): string[] | null {
    if (this.protocol !== 'http-api') return [];
    const found = serverBasePaths(Object.hasOwn(holder, 'servers') ? holder.servers : undefined, pointer);
    if (found === null) return null;
    for (const entry of found.skipped) this.skip(entry.pointer, entry.reason);
    return found.basePaths;
  }

  private basePathsOfDocument(): string[] {
    this.documentBasePaths ??= this.basePathsAt(this.document, '/servers') ?? [];
    return this.documentBasePaths;
  }

  private importOperation(routeTemplate: string, method: string, operation: unknown, pointer: string, pathBasePaths: string[]): void {
    if (!isPlainObject(operation)) {
      this.skip(pointer, 'invalid operation (not an object)');
      return;
    }
    if (!(OPERATION_METHODS as readonly string[]).includes(method)) {
      // 01 Limits: GET, POST, PUT, PATCH, DELETE. Only an operation with a payload leaves something out.
      if (this.declaresPayload(operation, pointer)) this.skip(pointer, `unsupported method ${method}`);
      return;
    }
    const sites = this.sitesOf(operation, pointer);
    // An operation that declares no payload at all (OpenAPI 3.1 makes `responses` optional) is
    // still an operation: observing it must not be an unknown operation, so it imports with an
    // unchecked payload: any response of an API call, the message of a webhook.
    if (this.declaresNoPayload(operation)) {
      const payloadLocation: PayloadLocation = this.protocol === 'http-api' ? 'response' : 'message';
      const undeclared = this.protocol === 'http-api' ? 'no responses declared' : 'no request body declared';
      sites.push({ payloadLocation, statusSelector: ANY_STATUS_SELECTOR, pointer, content: undefined, undeclared });
    }
    // OpenAPI: the most specific level that declares servers wins (operation, path item, document).
    const basePaths = this.basePathsAt(operation, `${pointer}/servers`) ?? pathBasePaths;
    for (const site of sites) this.importSite(routeTemplate, method as OperationMethod, site, basePaths);
  }

  private declaresNoPayload(operation: Record<string, unknown>): boolean {
    if (Object.hasOwn(operation, 'requestBody')) return false;
    if (this.protocol !== 'http-api') return true;
    const responses = operation.responses;
    return (
      !Object.hasOwn(operation, 'responses') || (isPlainObject(responses) && Object.keys(responses).every((code) => code.startsWith('x-')))
    );
  }

  private declaresPayload(operation: Record<string, unknown>, pointer: string): boolean {
    if (Object.hasOwn(operation, 'requestBody')) return true;
    const responses = operation.responses;
    if (this.protocol !== 'http-api' || !isPlainObject(responses)) return false;
    return Object.keys(responses).some((code) => {
      const resolved = this.resolve(responses[code], childPointer(`${pointer}/responses`, code));
      return 'skipped' in resolved || (isPlainObject(resolved.node) && Object.hasOwn(resolved.node, 'content'));
    });
  }

  private sitesOf(operation: Record<string, unknown>, pointer: string): Site[] {
    const sites: Site[] = [];
    if (Object.hasOwn(operation, 'requestBody')) {
      const location: PayloadLocation = this.protocol === 'http-api' ? 'request' : 'message';
      const site = this.site(operation.requestBody, `${pointer}/requestBody`, location, ANY_STATUS_SELECTOR, 'request body');
      if (site) sites.push(site);
    }
    // A webhook's responses are what the receiver answers; the inbound contract is the message.
    if (this.protocol !== 'http-api' || !Object.hasOwn(operation, 'responses')) return sites;
    const responses = operation.responses;
    if (!isPlainObject(responses)) {
      this.skip(`${pointer}/responses`, 'invalid responses (not an object)');
      return sites;
    }
    const selectors = new Set<string>();
    for (const code of Object.keys(responses).sort(compare)) {
      if (code.startsWith('x-')) continue;
      const responsePointer = childPointer(`${pointer}/responses`, code);
      const selector = normalizeStatusSelector(code);
      if (selector === null) {
        this.skip(responsePointer, `invalid status code ${quote(code)}`);
        continue;
      }
      if (selectors.has(selector)) {
        this.skip(responsePointer, `duplicate status selector ${selector}`);
        continue;
      }
      selectors.add(selector);
      const site = this.site(responses[code], responsePointer, 'response', selector, 'response');
      if (site) sites.push(site);
    }
    return sites;
  }

  private site(value: unknown, pointer: string, payloadLocation: PayloadLocation, statusSelector: string, what: string): Site | null {
    const resolved = this.resolve(value, pointer);
    if ('skipped' in resolved) {
      this.skip(resolved.skipped.pointer, resolved.skipped.reason);
      return null;
    }
    if (!isPlainObject(resolved.node)) {
      this.skip(resolved.pointer, `invalid ${what} (not an object)`);
      return null;
    }
    return { payloadLocation, statusSelector, pointer: resolved.pointer, content: resolved.node.content };
  }

  /**
   * One payload becomes one operation. Its schema comes from `application/json`, else from the
   * first `application/*+json` type in sorted order; other media types of the same payload are
   * not compared. A payload without content declares nothing to check; non-JSON content or JSON
   * content without a schema is unchecked.
   */
  private importSite(routeTemplate: string, method: OperationMethod, site: Site, basePaths: string[]): void {
    const key = operationKey(method, routeTemplate, site.payloadLocation, site.statusSelector);
    if (this.operations.has(key)) {
      this.skip(site.pointer, `duplicate operation ${quote(key)}`);
      return;
    }
    const { schema, unchecked } = this.payloadSchema(site);
    for (const entry of unchecked) this.skip(entry.pointer, entry.reason);
    this.operations.set(key, {
      operationKey: key,
      method,
      routeTemplate,
      basePaths,
      eventType: this.protocol === 'http-webhook' ? routeTemplate : null,
      payloadLocation: site.payloadLocation,
      statusSelector: site.statusSelector,
      fingerprint: this.fingerprintOf(schema),
      schema,
      unchecked,
    });
  }

  /**
   * The operation's fingerprint, counting its canonical size against the import's budget: each
   * operation's schema is self-contained, so the sum follows operations × what each references.
   */
  private fingerprintOf(schema: Record<string, unknown>): string {
    const canonical = canonicalJson(schema);
    this.schemaBytes += Buffer.byteLength(canonical);
    if (this.schemaBytes > MAX_IMPORT_SCHEMA_BYTES) {
      throw invalidContract(`the operations' schemas exceed ${MAX_IMPORT_SCHEMA_BYTES} bytes in all (the limit per import)`, ['']);
    }
    return canonicalFingerprint(canonical);
  }

  private payloadSchema(site: Site): { schema: Record<string, unknown>; unchecked: UncheckedSubschema[] } {
    const whole = (pointer: string, reason: string) => ({ schema: {}, unchecked: [{ pointer, schemaPointer: '', reason }] });
    if (site.undeclared !== undefined) return whole(site.pointer, site.undeclared);
    if (site.content === undefined) return { schema: {}, unchecked: [] };
    const contentPointer = `${site.pointer}/content`;
    if (!isPlainObject(site.content)) return whole(contentPointer, 'invalid content (not an object)');
    const mediaTypes = Object.keys(site.content).sort(compare);
    if (mediaTypes.length === 0) return { schema: {}, unchecked: [] };
    const json = mediaTypes.filter(isJsonMediaType);
    if (json.length === 0) {
      return {
        schema: {},
        unchecked: mediaTypes
          .map((mediaType) => ({
            pointer: childPointer(contentPointer, mediaType),
            schemaPointer: '',
            reason: `non-JSON media type ${quote(mediaType)}`,
          }))
          .sort((a, b) => compare(a.pointer, b.pointer)),
      };
    }
    const chosen = json.find((mediaType) => mediaEssence(mediaType) === 'application/json') ?? json[0];
    const mediaPointer = childPointer(contentPointer, chosen);
    const media = site.content[chosen];
    if (!isPlainObject(media)) return whole(mediaPointer, 'invalid media type object (not an object)');
    if (!Object.hasOwn(media, 'schema')) return whole(mediaPointer, 'no schema');
    const compiled = this.schemas.compile(media.schema, `${mediaPointer}/schema`);
    // Lenient compilation leaves every problem unchecked; a schema is always produced.
    if (compiled.schema === null) throw new Error('a lenient schema compilation reported problems');
    return { schema: compiled.schema, unchecked: compiled.unchecked };
  }

  /** Follows local `$ref`s of path items, request bodies and responses to the object they name. */
  private resolve(value: unknown, pointer: string): Resolved {
    let node = value;
    let at = pointer;
    const seen = new Set<string>();
    for (;;) {
      if (!isPlainObject(node) || !Object.hasOwn(node, '$ref')) return { node, pointer: at };
      const ref = node.$ref;
      // The object holding the reference is what is left out.
      const refPointer = at;
      if (typeof ref !== 'string') return { skipped: { pointer: refPointer, reason: 'invalid reference (not a string)' } };
      const parsed = parseReference(ref);
      if (parsed.kind === 'remote') return { skipped: { pointer: refPointer, reason: `remote reference ${quote(ref)}` } };
      if (parsed.kind !== 'local' || parsed.pointer === '') {
        return { skipped: { pointer: refPointer, reason: `unsupported reference ${quote(ref)}` } };
      }
      if (seen.has(parsed.pointer) || seen.size >= MAX_REFERENCE_HOPS)
        return { skipped: { pointer: refPointer, reason: 'reference cycle' } };
      seen.add(parsed.pointer);
      const target = resolveTokens(this.document, parsed.tokens);
      if (target === undefined) return { skipped: { pointer: refPointer, reason: `unresolved reference ${quote(ref)}` } };
      node = target;
      at = parsed.pointer;
    }
  }

  private skip(pointer: string, reason: string): void {
    this.skipped.set(`${pointer}\u0000${reason}`, { pointer, reason });
  }
}

/** A version member as quoted in a reason; only scalars are printed. */
function describe(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return Array.isArray(value) ? '(array)' : '(object)';
}

function mediaEssence(mediaType: string): string {
  return mediaType.split(';')[0].trim().toLowerCase();
}

/** 01 "Import rules" 4: JSON and `application/*+json` content. */
export function isJsonMediaType(mediaType: string): boolean {
  const essence = mediaEssence(mediaType);
  return essence === 'application/json' || /^application\/[^\s/;]+\+json$/.test(essence);
}
