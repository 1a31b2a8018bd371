// The breaking changes between two contract versions (issue 31, "beyond the spec"): what the
// console shows before a version replaces the active one. A pure function over the versions'
// operation schemas (self-contained JSON Schema in the supported subset, 00-decisions §7).

/** One operation of a version, as the Contract API lists it. */
export interface VersionOperation {
  operationKey: string;
  schema: Record<string, unknown>;
}

export type BreakingChange =
  | { kind: 'operation_removed'; operationKey: string }
  | { kind: 'field_removed'; operationKey: string; path: string }
  | { kind: 'field_newly_required'; operationKey: string; path: string }
  | { kind: 'type_narrowed'; operationKey: string; path: string; from: string; to: string };

/** The path of the payload itself. */
export const ROOT_PATH = '(payload)';

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** How deep the walk goes: recursive `$defs` end here rather than loop. */
const MAX_DEPTH = 32;

/** `#/$defs/Name` of the operation's own `$defs` (the only references a stored schema holds). */
function resolve(schema: Schema, root: Schema): Schema {
  let current = schema;
  for (let hops = 0; hops < MAX_DEPTH && typeof current.$ref === 'string'; hops++) {
    const match = /^#\/\$defs\/(.+)$/.exec(current.$ref);
    const defs = root.$defs;
    const target = match && isSchema(defs) ? defs[match[1].replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (!isSchema(target)) return {};
    current = target;
  }
  return current;
}

/** The JSON types a schema admits; null when it admits any (no `type`). */
function typesOf(schema: Schema): Set<string> | null {
  const { type } = schema;
  if (typeof type === 'string') return new Set([type]);
  if (Array.isArray(type)) return new Set(type.filter((item): item is string => typeof item === 'string'));
  return null;
}

const admits = (types: Set<string> | null, type: string) =>
  types === null || types.has(type) || (type === 'integer' && types.has('number'));

const typeWords = (types: Set<string> | null) => (types === null ? 'any' : [...types].sort().join(' | '));

const enumOf = (schema: Schema): unknown[] | null => (Array.isArray(schema.enum) ? schema.enum : null);

/** Whether `after` refuses a value `before` accepted, by type or by enumeration. */
function narrowing(before: Schema, after: Schema): { from: string; to: string } | null {
  const was = typesOf(before);
  const is = typesOf(after);
  const lost = was === null ? is !== null : [...was].some((type) => !admits(is, type));
  if (lost) return { from: typeWords(was), to: typeWords(is) };
  const wasEnum = enumOf(before);
  const isEnum = enumOf(after);
  if (isEnum === null) return null;
  const key = (value: unknown) => JSON.stringify(value);
  const kept = new Set(isEnum.map(key));
  if (wasEnum === null || wasEnum.some((value) => !kept.has(key(value)))) {
    const words = (values: unknown[] | null) => (values === null ? typeWords(was) : values.map(key).join(' | '));
    return { from: words(wasEnum), to: words(isEnum) };
  }
  return null;
}

const child = (path: string, name: string) => (path === ROOT_PATH ? name : `${path}.${name}`);

const requiredOf = (schema: Schema) =>
  new Set(Array.isArray(schema.required) ? schema.required.filter((item): item is string => typeof item === 'string') : []);

function compare(
  operationKey: string,
  path: string,
  beforeSchema: Schema,
  beforeRoot: Schema,
  afterSchema: Schema,
  afterRoot: Schema,
  depth: number,
  seen: ReadonlySet<string>,
  out: BreakingChange[],
): void {
  if (depth > MAX_DEPTH) return;
  // A pair of definitions already compared on this path (a recursive schema): its differences are reported there.
  const pair =
    typeof beforeSchema.$ref === 'string' || typeof afterSchema.$ref === 'string' ? `${beforeSchema.$ref} ${afterSchema.$ref}` : null;
  if (pair !== null && seen.has(pair)) return;
  const within = pair === null ? seen : new Set([...seen, pair]);
  const before = resolve(beforeSchema, beforeRoot);
  const after = resolve(afterSchema, afterRoot);
  const narrowed = narrowing(before, after);
  if (narrowed) out.push({ kind: 'type_narrowed', operationKey, path, ...narrowed });

  const beforeProperties = isSchema(before.properties) ? before.properties : {};
  const afterProperties = isSchema(after.properties) ? after.properties : {};
  const wasRequired = requiredOf(before);
  const isRequired = requiredOf(after);
  for (const name of Object.keys(beforeProperties).sort()) {
    const was = beforeProperties[name];
    const is = afterProperties[name];
    if (!Object.hasOwn(afterProperties, name) || !isSchema(is)) {
      out.push({ kind: 'field_removed', operationKey, path: child(path, name) });
    } else if (isSchema(was)) {
      compare(operationKey, child(path, name), was, beforeRoot, is, afterRoot, depth + 1, within, out);
    }
  }
  for (const name of [...isRequired].sort()) {
    if (!wasRequired.has(name)) out.push({ kind: 'field_newly_required', operationKey, path: child(path, name) });
  }
  if (isSchema(before.items) && isSchema(after.items)) {
    compare(operationKey, `${path}[]`, before.items, beforeRoot, after.items, afterRoot, depth + 1, within, out);
  }
}

/**
 * What `candidate` breaks of `active`: its operations gone, and for each operation both keep
 * (same operation key), the fields removed, the fields newly required and the types or
 * enumerations narrowed, walking properties and array items (`a.b[].c`). Ordered by operation
 * key, then as found (a field before its children). An empty list: nothing the active version
 * accepted is refused by the candidate.
 */
export function breakingChanges(active: readonly VersionOperation[], candidate: readonly VersionOperation[]): BreakingChange[] {
  const next = new Map(candidate.map((operation) => [operation.operationKey, operation]));
  const out: BreakingChange[] = [];
  for (const operation of [...active].sort((a, b) => (a.operationKey < b.operationKey ? -1 : a.operationKey > b.operationKey ? 1 : 0))) {
    const kept = next.get(operation.operationKey);
    if (!kept) {
      out.push({ kind: 'operation_removed', operationKey: operation.operationKey });
      continue;
    }
    compare(operation.operationKey, ROOT_PATH, operation.schema, operation.schema, kept.schema, kept.schema, 0, new Set(), out);
  }
  return out;
}
