// What a corpus document declares, read independently of the importer: every request body and
// response (http-api) or request body (http-webhook) of every operation, with where it is
// declared and whether it has JSON content (issue 14's measure: "each response status and request
// body with JSON content").

import { upgradeFromTwoToThree } from '@scalar/openapi-upgrader/2.0-to-3.0';

export type Json = Record<string, unknown>;

export const escapeToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
export const unescapeToken = (token: string) => token.replace(/~1/g, '/').replace(/~0/g, '~');
export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The node an RFC 6901 pointer names inside `root` (own members only), or undefined. */
export function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node = root;
  for (const token of pointer.slice(1).split('/').map(unescapeToken)) {
    if (!isObject(node) || !Object.hasOwn(node, token)) return undefined;
    node = node[token];
  }
  return node;
}

export interface DeclaredPayload {
  key: string;
  route: string;
  /** Where the payload is declared and, through local references, defined. */
  pointers: string[];
  /** Declares content with a JSON media type (the measure). */
  json: boolean;
}

const PATH_ITEM_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query'];
const SUPPORTED_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const JSON_MEDIA = /^application\/([^\s/;]+\+)?json\s*(;|$)/i;

// An independent, deliberately simple walk of what a document declares: every request body and
// response (http-api) or request body (http-webhook) of every operation, with the pointers of
// where it is declared. An operation of a supported method that declares no payload at all is
// one payload too (its observation must not be an unknown operation).
export function declaredPayloads(document: Json, source: 'paths' | 'webhooks'): DeclaredPayload[] {
  const resolve = (node: unknown, pointer: string): [unknown, string[]] => {
    const pointers = [pointer];
    for (let hops = 0; hops < 32 && isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/'); hops++) {
      const target = node.$ref.slice(1);
      node = resolvePointer(
        document,
        target
          .split('/')
          .map((token) => escapeToken(unescapeToken(decodeURIComponent(token))))
          .join('/'),
      );
      pointers.push(target);
    }
    return [node, pointers];
  };
  const payloadKey = (method: string, name: string, location: string, code: string) => {
    const selector = /^[1-5]xx$/i.test(code) ? code.toUpperCase() : /^default$/i.test(code) ? 'default' : code;
    return `${method.toUpperCase()} ${name}:${location}:${selector}`;
  };
  const hasJson = (body: unknown) =>
    isObject(body) && isObject(body.content) && Object.keys(body.content).some((type) => JSON_MEDIA.test(type.trim()));
  const payloads: DeclaredPayload[] = [];
  const container = document[source] as Json;
  for (const [name, rawItem] of Object.entries(container)) {
    if (source === 'paths' && name.startsWith('x-')) continue;
    const [item, itemPointers] = resolve(rawItem, `/${source}/${escapeToken(name)}`);
    if (!isObject(item)) continue;
    for (const method of PATH_ITEM_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const at = (suffix: string) => itemPointers.map((pointer) => `${pointer}/${method}${suffix}`);
      const supported = SUPPORTED_METHODS.has(method);
      let count = 0;
      if (Object.hasOwn(operation, 'requestBody')) {
        const [body, pointers] = resolve(operation.requestBody, at('/requestBody').at(-1) as string);
        payloads.push({
          key: payloadKey(method, name, source === 'paths' ? 'request' : 'message', 'default'),
          route: name,
          pointers: [...at('/requestBody'), ...pointers],
          json: hasJson(body),
        });
        count++;
      }
      if (source === 'paths' && isObject(operation.responses)) {
        for (const [code, rawResponse] of Object.entries(operation.responses)) {
          if (code.startsWith('x-')) continue;
          const [response, pointers] = resolve(rawResponse, at(`/responses/${escapeToken(code)}`).at(-1) as string);
          // A method outside 01 Limits leaves out only what declares content.
          if (!supported && isObject(response) && !Object.hasOwn(response, 'content')) continue;
          payloads.push({
            key: payloadKey(method, name, 'response', code),
            route: name,
            pointers: [...at(`/responses/${escapeToken(code)}`), ...pointers],
            json: hasJson(response),
          });
          count++;
        }
      }
      if (count === 0 && supported)
        payloads.push({
          key: payloadKey(method, name, source === 'paths' ? 'response' : 'message', 'default'),
          route: name,
          pointers: at(''),
          json: false,
        });
    }
  }
  return payloads;
}

/** The document the importer reads: a Swagger 2.0 document through its OpenAPI 3.0 conversion. */
export const asImported = (document: Json): Json =>
  document.swagger === '2.0' ? (upgradeFromTwoToThree(structuredClone(document)) as Json) : document;
