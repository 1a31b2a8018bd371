// Counts the JSON payloads a corpus document declares, read independently of the importer:
// the measure of issue 14 ("each response status and request body with JSON content").

import { upgradeFromTwoToThree } from '@scalar/openapi-upgrader/2.0-to-3.0';
import { normalizeStatusSelector, operationKey } from '../../shared/contracts/index.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function resolveLocal(document: Json, value: unknown): unknown {
  let node = value;
  for (let hops = 0; hops < 32 && isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/'); hops++) {
    node = node.$ref.slice(2).split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, token) => (isObject(at) ? at[token] : undefined), document);
  }
  return node;
}

function hasJson(document: Json, body: unknown): boolean {
  const resolved = resolveLocal(document, body);
  if (!isObject(resolved) || !isObject(resolved.content)) return false;
  return Object.keys(resolved.content).some((type) => /^application\/([^\s/;]+\+)?json\s*(;|$)/i.test(type.trim()));
}

/** The operationKeys of a document's JSON payloads (Swagger 2.0 read through its OpenAPI 3.0 conversion). */
export function jsonPayloadKeys(source: Json, protocol: 'http-api' | 'http-webhook'): string[] {
  const document = source.swagger === '2.0' ? (upgradeFromTwoToThree(structuredClone(source)) as Json) : source;
  const container = document[protocol === 'http-api' ? 'paths' : 'webhooks'];
  const keys: string[] = [];
  if (!isObject(container)) return keys;
  for (const [name, value] of Object.entries(container)) {
    const pathItem = resolveLocal(document, value);
    if (name.startsWith('x-') || !isObject(pathItem)) continue;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const verb = method.toUpperCase();
      if (hasJson(document, operation.requestBody)) keys.push(operationKey(verb, name, protocol === 'http-api' ? 'request' : 'message', 'default'));
      if (protocol !== 'http-api' || !isObject(operation.responses)) continue;
      for (const [code, response] of Object.entries(operation.responses)) {
        if (hasJson(document, response)) keys.push(operationKey(verb, name, 'response', normalizeStatusSelector(code) ?? code));
      }
    }
  }
  return keys;
}
