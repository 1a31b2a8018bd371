// Swagger 2.0 → OpenAPI 3.0 by @scalar/openapi-upgrader, kept at 0.1 (its last line supporting
// Node 20; docs/decisions/contracts.md). That line gives the document's `produces`
// precedence over an operation's own when it converts the operation's responses (Swagger 2.0:
// the operation's replaces the document's; fixed in later lines). So the operations are
// converted from a copy whose document-level `produces` was moved into every operation without
// one, and the shared responses (`#/responses`, which only the document's applies to) from a copy
// that keeps it.

import { upgradeFromTwoToThree } from '@scalar/openapi-upgrader/2.0-to-3.0';
import { isPlainObject } from './jsonPointer.js';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** The OpenAPI 3.0 conversion of a Swagger 2.0 document; `document` is not changed. Throws on documents the converter cannot read. */
export function convertSwagger(document: Record<string, unknown>): Record<string, unknown> {
  const whole = upgradeFromTwoToThree(structuredClone(document)) as Record<string, unknown>;
  if (!Object.hasOwn(document, 'produces') || !isPlainObject(document.paths)) return whole;
  const copy = structuredClone(document);
  const produces = copy.produces;
  delete copy.produces;
  for (const pathItem of Object.values(copy.paths as Record<string, unknown>)) {
    if (!isPlainObject(pathItem)) continue;
    for (const method of OPERATION_METHODS) {
      const operation = pathItem[method];
      if (isPlainObject(operation) && !Object.hasOwn(operation, 'produces')) operation.produces = structuredClone(produces);
    }
  }
  const operations = upgradeFromTwoToThree(copy) as Record<string, unknown>;
  const sharedResponses = isPlainObject(whole.components) ? whole.components.responses : undefined;
  if (sharedResponses === undefined) return operations;
  return {
    ...operations,
    components: { ...(isPlainObject(operations.components) ? operations.components : {}), responses: sharedResponses },
  };
}
