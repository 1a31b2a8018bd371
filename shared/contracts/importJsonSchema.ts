// Imports a JSON Schema bound to one explicit operation selector (01 "Register": `format`
// `json-schema` with `operation`; "Import rules" 3–6). The schema must stay inside the supported
// subset (00-decisions §7, strict rule): `allOf` is flattened, but a remote reference, `oneOf`,
// `anyOf` or another keyword outside the subset anywhere refuses the whole import with 400
// `invalid_contract` and the pointers (into the schema) of every offending keyword.

import { fingerprint } from '../fingerprint.js';
import { invalidContract } from './invalidContract.js';
import { isPlainObject } from './jsonPointer.js';
import { normalizeStatusSelector, operationKey, quote } from './operationKey.js';
import { SchemaCompiler } from './schemaSubset.js';
import { OPERATION_METHODS, type ContractProtocol, type ImportedOperation, type OperationMethod, type PayloadLocation } from './types.js';

const SELECTOR_FIELDS = ['method', 'routeTemplate', 'payloadLocation', 'statusSelector'] as const;
const MAX_ROUTE_TEMPLATE = 512;
// Drafts up to 07 ignore every member beside `$ref`; 2019-09 and 2020-12 apply them as well.
const SIBLINGS_IGNORED_DRAFT = /^https?:\/\/json-schema\.org\/draft-0[3-7]\/schema#?$/;

/** 03 transport table: which methods and payload locations each protocol's operations use. */
const PROTOCOL_RULES: Record<ContractProtocol, { methods: readonly OperationMethod[]; locations: readonly PayloadLocation[] }> = {
  'http-api': { methods: OPERATION_METHODS, locations: ['request', 'response'] },
  'http-webhook': { methods: OPERATION_METHODS, locations: ['message'] },
  queue: { methods: ['POST'], locations: ['message'] },
  'scheduled-feed': { methods: ['POST'], locations: ['message'] },
};

export function importJsonSchema(schema: unknown, selector: unknown, protocol: ContractProtocol): ImportedOperation {
  const rules = Object.hasOwn(PROTOCOL_RULES, protocol) ? PROTOCOL_RULES[protocol] : undefined;
  if (rules === undefined) throw invalidContract(`unknown protocol ${quote(String(protocol))}`, []);
  const operation = checkSelector(selector, protocol, rules);

  if (!isPlainObject(schema)) throw invalidContract('the document is not a JSON Schema object', ['']);
  const declared = schema.$schema;
  const compiler = new SchemaCompiler(schema, {
    refSiblingsApply: !(typeof declared === 'string' && SIBLINGS_IGNORED_DRAFT.test(declared)),
    rootIsSchema: true,
    namedContainer: ['$defs'],
    leaveUnchecked: false,
  });
  const compiled = compiler.compile(schema, '');
  if (compiled.schema === null) {
    const [first, ...rest] = compiled.problems;
    const reason = rest.length === 0 ? first.reason : `${first.reason} (and ${rest.length} more)`;
    throw invalidContract(reason, [...new Set(compiled.problems.map((problem) => problem.at))]);
  }
  return {
    operationKey: operationKey(operation.method, operation.routeTemplate, operation.payloadLocation, operation.statusSelector),
    ...operation,
    basePaths: [],
    eventType: null,
    fingerprint: fingerprint(compiled.schema),
    schema: compiled.schema,
    unchecked: [],
  };
}

interface CheckedSelector {
  method: OperationMethod;
  routeTemplate: string;
  payloadLocation: PayloadLocation;
  statusSelector: string;
}

function checkSelector(selector: unknown, protocol: ContractProtocol, rules: (typeof PROTOCOL_RULES)[ContractProtocol]): CheckedSelector {
  if (!isPlainObject(selector))
    throw invalidContract('operation selector {method, routeTemplate, payloadLocation, statusSelector} is required for json-schema', []);
  const unknown = Object.keys(selector).find((key) => !(SELECTOR_FIELDS as readonly string[]).includes(key));
  if (unknown !== undefined) throw invalidContract(`operation has an unknown member ${quote(unknown)}`, []);
  const missing = SELECTOR_FIELDS.find((key) => typeof selector[key] !== 'string');
  if (missing !== undefined) throw invalidContract(`operation.${missing} must be a string`, []);
  const { method, routeTemplate, payloadLocation, statusSelector } = selector as Record<(typeof SELECTOR_FIELDS)[number], string>;

  if (!(rules.methods as readonly string[]).includes(method)) {
    throw invalidContract(`operation.method must be ${rules.methods.join(' or ')} for ${protocol}`, []);
  }
  if (!(rules.locations as readonly string[]).includes(payloadLocation)) {
    throw invalidContract(`operation.payloadLocation must be ${rules.locations.join(' or ')} for ${protocol}`, []);
  }
  checkRouteTemplate(routeTemplate, protocol);
  const status = normalizeStatusSelector(statusSelector);
  if (status === null) throw invalidContract('operation.statusSelector must be a status code 100-599, a range such as 2XX, or default', []);
  return { method: method as OperationMethod, routeTemplate, payloadLocation: payloadLocation as PayloadLocation, statusSelector: status };
}

/** 03 transport rule 2: a bounded path (HTTP API) or label (webhook name, queue, topic, feed, job). */
function checkRouteTemplate(routeTemplate: string, protocol: ContractProtocol): void {
  if (routeTemplate.length === 0 || routeTemplate.length > MAX_ROUTE_TEMPLATE) {
    throw invalidContract(`operation.routeTemplate must be 1 to ${MAX_ROUTE_TEMPLATE} characters`, []);
  }
  if (/[\u0000-\u001f\u007f]/.test(routeTemplate) || routeTemplate.trim() !== routeTemplate) {
    throw invalidContract('operation.routeTemplate must not contain control characters or surrounding spaces', []);
  }
  if (protocol === 'http-api' && (!routeTemplate.startsWith('/') || /[?#\s]/.test(routeTemplate))) {
    throw invalidContract('operation.routeTemplate must be an absolute path without query string for http-api', []);
  }
}
