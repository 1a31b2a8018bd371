// `repair.ts`: the patched schema as TypeScript a developer pastes into the integration — a type
// for the new shape, a structural guard and a normaliser — with no dependency, compiling under
// `tsc --strict` on its own. The guard checks what the stored subset says (type, properties,
// required, items, enum, additionalProperties, `$defs` references, recursion) with JSON Schema's
// meaning: a keyword about objects applies to objects only, `number` accepts integers. Written
// by hand: the subset is small, and a type generator such as json-schema-to-typescript is
// asynchronous and formats with Prettier, while the bundle is built synchronously, byte for byte.

import { isPlainObject, parseReference } from '../../contracts/jsonPointer.js';
import { compare } from '../../contracts/schemaSubset.js';

export interface GuardNames {
  /** The exported type; `is<Type>` and `normalise<Type>` are the functions. */
  type: string;
}

const ROOT_CHECK = 'checkPayload';
// Global types the generated code uses or a reader expects; a definition named so is renamed.
const RESERVED = new Set(['Array', 'Boolean', 'Error', 'Number', 'Object', 'Problem', 'Record', 'String', 'Symbol', 'TypeError']);

/** `POST /v1/orders:response:201` → `PostV1OrdersResponse201`. */
export function typeNameOf(method: string, routeTemplate: string, payloadLocation: string, statusSelector: string): string {
  return pascal(`${method.toLowerCase()} ${routeTemplate} ${payloadLocation} ${statusSelector}`) || 'Payload';
}

function pascal(text: string): string {
  return (text.match(/[A-Za-z0-9]+/g) ?? []).map((word) => word[0].toUpperCase() + word.slice(1)).join('');
}

export function guardSource(schema: Record<string, unknown>, names: GuardNames, header: readonly string[]): string {
  return new GuardWriter(schema, names).write(header);
}

class GuardWriter {
  private readonly defs: Record<string, unknown>;
  /** `$defs` name → TypeScript type name and check function. */
  private readonly defNames = new Map<string, { type: string; check: string }>();
  private readonly functions: string[] = [];
  private readonly constants: string[] = [];
  private next = 0;

  constructor(
    private readonly schema: Record<string, unknown>,
    private readonly names: GuardNames,
  ) {
    this.defs = isPlainObject(schema.$defs) ? schema.$defs : {};
    const taken = new Set([names.type]);
    Object.keys(this.defs)
      .sort(compare)
      .forEach((name, index) => {
        let type = pascal(name) || 'Definition';
        if (/^[0-9]/.test(type) || RESERVED.has(type)) type = `Schema${type}`;
        while (taken.has(type)) type = `${type}_`;
        taken.add(type);
        this.defNames.set(name, { type, check: `checkDefinition${index}` });
      });
  }

  write(header: readonly string[]): string {
    const type = this.names.type;
    const cyclic = this.aliasCycles();
    const types: string[] = [];
    for (const [name, def] of [...this.defNames].sort((a, b) => compare(a[0], b[0]))) {
      const node = this.defs[name];
      types.push(`export type ${def.type} = ${cyclic.has(name) ? 'unknown' : this.typeOf(node)};`);
      this.check(node, def.check);
    }
    const root = withoutDefs(this.schema);
    const rootCheck = this.check(root, ROOT_CHECK);
    return [
      ...header.map((line) => `// ${line.replace(/[\r\n\u2028\u2029]+/g, ' ')}`),
      '',
      `/** The payload the repaired contract accepts. */`,
      `export type ${type} = ${this.typeOf(root)};`,
      ...types,
      '',
      `/** True when \`value\` has the shape of ${type}. */`,
      `export function is${type}(value: unknown): value is ${type} {`,
      `  return ${rootCheck}(value, '') === null;`,
      '}',
      '',
      '/**',
      ` * Returns \`value\` as a ${type} when it has that shape, unchanged (nothing is copied, coerced`,
      ' * or dropped); otherwise throws a TypeError that names the first member that does not (a JSON',
      ' * Pointer into the value) and what the contract allows there.',
      ' */',
      `export function normalise${type}(value: unknown): ${type} {`,
      `  const problem = ${rootCheck}(value, '');`,
      `  if (problem !== null) throw new TypeError('not a ${type}: ' + problem);`,
      `  return value as ${type};`,
      '}',
      '',
      '/** What is wrong at a place of the value, or null. */',
      'type Problem = string | null;',
      '',
      'function isRecord(value: unknown): value is { [key: string]: unknown } {',
      "  return typeof value === 'object' && value !== null && !Array.isArray(value);",
      '}',
      '',
      'function has(value: { [key: string]: unknown }, key: string): boolean {',
      '  return Object.prototype.hasOwnProperty.call(value, key);',
      '}',
      '',
      'function at(path: string, key: string | number): string {',
      "  return path + '/' + String(key).replace(/~/g, '~0').replace(/\\//g, '~1');",
      '}',
      '',
      'function where(path: string): string {',
      "  return path === '' ? '(root)' : path;",
      '}',
      '',
      'function sameJson(a: unknown, b: unknown): boolean {',
      '  if (a === b) return true;',
      '  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => sameJson(item, b[index]));',
      '  if (!isRecord(a) || !isRecord(b)) return false;',
      '  const keys = Object.keys(a);',
      '  return keys.length === Object.keys(b).length && keys.every((key) => has(b, key) && sameJson(a[key], b[key]));',
      '}',
      ...(this.constants.length > 0 ? ['', ...this.constants] : []),
      '',
      this.functions.join('\n\n'),
      '',
    ].join('\n');
  }

  /** Definitions that are, through top-level references only, aliases of themselves: TypeScript rejects those. */
  private aliasCycles(): Set<string> {
    const cyclic = new Set<string>();
    for (const start of this.defNames.keys()) {
      const seen = new Set<string>();
      let current: string | null = start;
      while (current !== null && !seen.has(current)) {
        seen.add(current);
        const node: unknown = this.defs[current];
        current = isPlainObject(node) ? this.refName(node.$ref) : null;
      }
      if (current === start) for (const name of seen) cyclic.add(name);
    }
    return cyclic;
  }

  private refName(ref: unknown): string | null {
    if (typeof ref !== 'string') return null;
    const parsed = parseReference(ref);
    if (parsed.kind !== 'local' || parsed.tokens.length !== 2 || parsed.tokens[0] !== '$defs') return null;
    return this.defNames.has(parsed.tokens[1]) ? parsed.tokens[1] : null;
  }

  private refType(ref: unknown): string {
    if (ref === '#') return this.names.type;
    const name = this.refName(ref);
    return name === null ? 'unknown' : (this.defNames.get(name) as { type: string }).type;
  }

  private refCheck(ref: unknown): string | null {
    const name = this.refName(ref);
    return name === null ? null : (this.defNames.get(name) as { check: string }).check;
  }

  /** The TypeScript type of a stored schema node; `indent` is the indentation of the line it starts on. */
  private typeOf(node: unknown, indent = ''): string {
    if (node === false) return 'never';
    if (!isPlainObject(node)) return 'unknown';
    let own: string | null = null;
    if (Array.isArray(node.enum)) {
      const allowed = node.enum.filter((value) => this.typeAllows(node.type, value));
      own = allowed.length === 0 ? 'never' : unionOf(allowed.map(literalType));
    } else if (node.type !== undefined) {
      const types = Array.isArray(node.type) ? (node.type as string[]) : [node.type as string];
      own = unionOf(types.map((type) => this.typeOfKind(node, type, indent)));
    }
    if (!Object.hasOwn(node, '$ref')) return own ?? 'unknown';
    const target = this.refType(node.$ref);
    return own === null ? target : `${target} & (${own})`;
  }

  private typeAllows(type: unknown, value: unknown): boolean {
    if (type === undefined) return true;
    const types = Array.isArray(type) ? (type as string[]) : [type as string];
    return types.some((name) => kindTest(name, value));
  }

  private typeOfKind(node: Record<string, unknown>, type: string, indent: string): string {
    switch (type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return Object.hasOwn(node, 'items') ? `(${this.typeOf(node.items, indent)})[]` : 'unknown[]';
      case 'object':
        return this.objectType(node, indent);
      default:
        return 'unknown';
    }
  }

  private objectType(node: Record<string, unknown>, indent: string): string {
    const inner = `${indent}  `;
    const properties = isPlainObject(node.properties) ? node.properties : {};
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    const members = Object.keys(properties)
      .sort(compare)
      .map((name) => `${JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${this.typeOf(properties[name], inner)};`);
    for (const name of [...required].sort(compare)) if (!Object.hasOwn(properties, name)) members.push(`${JSON.stringify(name)}: unknown;`);
    const additional = node.additionalProperties;
    if (additional !== undefined && additional !== true && additional !== false) {
      members.push(`[key: string]: ${members.length === 0 ? this.typeOf(additional, inner) : 'unknown'};`);
    }
    if (members.length === 0) return '{ [key: string]: unknown }';
    return `{\n${members.map((member) => `${inner}${member}`).join('\n')}\n${indent}}`;
  }

  /** Writes the check function of a node; returns its name. */
  private check(node: unknown, name = `check${this.next++}`): string {
    // Written in the order the checks are named: a node's check before those of its members.
    const slot = this.functions.push('') - 1;
    const body: string[] = [];
    if (node === false) body.push("  return where(path) + ': no value is allowed here';");
    else if (isPlainObject(node)) this.checkBody(node, body);
    if (node !== false) body.push('  return null;');
    this.functions[slot] = `function ${name}(value: unknown, path: string): Problem {\n${body.join('\n')}\n}`;
    return name;
  }

  private checkBody(node: Record<string, unknown>, body: string[]): void {
    const types = node.type === undefined ? undefined : Array.isArray(node.type) ? (node.type as string[]) : [node.type as string];
    if (types !== undefined) {
      body.push(`  if (!(${types.map(kindExpression).join(' || ')})) return where(path) + ': expected ${types.join('|')}';`);
    }
    if (Array.isArray(node.enum)) {
      const constant = `ALLOWED_${this.constants.length}`;
      this.constants.push(`const ${constant}: readonly unknown[] = ${JSON.stringify(node.enum)};`);
      body.push(
        `  if (!${constant}.some((allowed) => sameJson(allowed, value))) return where(path) + ': expected one of ' + JSON.stringify(${constant});`,
      );
    }
    const properties = isPlainObject(node.properties) ? node.properties : undefined;
    const required = Array.isArray(node.required) ? (node.required as string[]) : [];
    const additional = node.additionalProperties;
    // Keywords about objects apply to objects only (and about arrays to arrays only): a node that
    // is nothing else has been narrowed by its type check already.
    const onlyObjects = types?.length === 1 && types[0] === 'object';
    if (properties !== undefined || required.length > 0 || (additional !== undefined && additional !== true)) {
      body.push(onlyObjects ? '  {' : '  if (isRecord(value)) {');
      for (const name of required) {
        body.push(`    if (!has(value, ${JSON.stringify(name)})) return where(at(path, ${JSON.stringify(name)})) + ': required';`);
      }
      for (const name of Object.keys(properties ?? {}).sort(compare)) {
        const check = this.check((properties as Record<string, unknown>)[name]);
        const key = JSON.stringify(name);
        body.push(`    if (has(value, ${key})) {`);
        body.push(`      const problem = ${check}(value[${key}], at(path, ${key}));`);
        body.push('      if (problem !== null) return problem;');
        body.push('    }');
      }
      if (additional !== undefined && additional !== true) {
        const declared = `DECLARED_${this.constants.length}`;
        this.constants.push(
          `const ${declared}: ReadonlySet<string> = new Set(${JSON.stringify(Object.keys(properties ?? {}).sort(compare))});`,
        );
        body.push('    for (const key of Object.keys(value)) {');
        body.push(`      if (${declared}.has(key)) continue;`);
        if (additional === false) body.push("      return where(at(path, key)) + ': not a member the contract declares';");
        else {
          body.push(`      const problem = ${this.check(additional)}(value[key], at(path, key));`);
          body.push('      if (problem !== null) return problem;');
        }
        body.push('    }');
      }
      body.push('  }');
    }
    if (Object.hasOwn(node, 'items')) {
      const check = this.check(node.items);
      body.push(types?.length === 1 && types[0] === 'array' ? '  {' : '  if (Array.isArray(value)) {');
      body.push('    for (let index = 0; index < value.length; index++) {');
      body.push(`      const problem = ${check}(value[index], at(path, index));`);
      body.push('      if (problem !== null) return problem;');
      body.push('    }');
      body.push('  }');
    }
    if (Object.hasOwn(node, '$ref')) {
      const target = node.$ref === '#' ? ROOT_CHECK : this.refCheck(node.$ref);
      if (target !== null) {
        body.push('  {');
        body.push(`    const problem = ${target}(value, path);`);
        body.push('    if (problem !== null) return problem;');
        body.push('  }');
      }
    }
  }
}

function withoutDefs(schema: Record<string, unknown>): Record<string, unknown> {
  const { $defs: _, ...rest } = schema;
  return rest;
}

function unionOf(types: string[]): string {
  const distinct = [...new Set(types)];
  return distinct.length === 1 ? distinct[0] : distinct.map((type) => (type.includes(' & ') ? `(${type})` : type)).join(' | ');
}

function literalType(value: unknown): string {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value);
  return 'unknown';
}

function kindTest(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    default:
      return false;
  }
}

function kindExpression(type: string): string {
  switch (type) {
    case 'string':
      return "typeof value === 'string'";
    case 'number':
      return "(typeof value === 'number' && Number.isFinite(value))";
    case 'integer':
      return "(typeof value === 'number' && Number.isInteger(value))";
    case 'boolean':
      return "typeof value === 'boolean'";
    case 'null':
      return 'value === null';
    case 'array':
      return 'Array.isArray(value)';
    case 'object':
      return 'isRecord(value)';
    default:
      return 'false';
  }
}
