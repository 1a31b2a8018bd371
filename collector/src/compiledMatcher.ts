// A shape that recurs is checked by a function generated for it (as ajv and fast-json-stringify
// generate theirs): field reads by constant name, which V8's inline caches make a few
// nanoseconds each, instead of a generic walk that looks every field name up in a Map. It answers
// exactly as matchesShape (shape.ts) does, or false where that one might say true but this one
// cannot be sure (an object whose prototype is not Object.prototype, an Object.prototype with enumerable names): false only means that
// the caller builds the shape.

import { MAX_SHAPE_NODES, type ShapeLimits, type ShapeMatcher } from './shape.js';

export type CompiledMatcher = (value: unknown) => boolean;

/** Generated code stays small: bigger shapes keep the generic walk. */
const MAX_COMPILED_NODES = 2_000;

class TooBig extends Error {}

/**
 * The generated check of `matcher`, or null when it cannot be generated (a field named
 * `__proto__`, which a property read would not see; a shape over MAX_COMPILED_NODES nodes; a
 * runtime that forbids generating code).
 */
export function compileMatcher(matcher: ShapeMatcher, limits: ShapeLimits): CompiledMatcher | null {
  try {
    const lines: string[] = [];
    let names = 0;
    let nodes = 0;
    const fresh = (prefix: string) => `${prefix}${names++}`;

    // Appends the statements that `return false` unless `v` (a variable name) has the shape `m`.
    const check = (v: string, m: ShapeMatcher): void => {
      if (++nodes > MAX_COMPILED_NODES) throw new TooBig();
      switch (m.kind) {
        case 'string':
        case 'boolean':
          lines.push(`if (typeof ${v} !== '${m.kind}') return false;`);
          return;
        case 'integer':
          lines.push(`if (typeof ${v} !== 'number' || !Number.isInteger(${v})) return false;`);
          return;
        case 'number':
          lines.push(`if (typeof ${v} !== 'number' || !Number.isFinite(${v}) || Number.isInteger(${v})) return false;`);
          return;
        case 'null':
          // JSON writes NaN and ±Infinity as null.
          lines.push(`if (${v} !== null && (typeof ${v} !== 'number' || Number.isFinite(${v}))) return false;`);
          return;
        case 'array': {
          lines.push(`if (!Array.isArray(${v}) || typeof ${v}.toJSON === 'function') return false;`);
          if (m.items === undefined) {
            lines.push(`if (${v}.length !== 0) return false;`);
            return;
          }
          const count = fresh('n');
          const index = fresh('i');
          const item = fresh('v');
          lines.push(`const ${count} = Math.min(${v}.length, ${limits.maxArrayItems});`);
          lines.push(`if (${count} === 0) return false;`);
          lines.push(`for (let ${index} = 0; ${index} < ${count}; ${index}++) {`);
          lines.push(`if (++budget.nodes > ${MAX_SHAPE_NODES}) return false;`);
          lines.push(`const ${item} = ${v}[${index}];`);
          check(item, m.items);
          lines.push('}');
          return;
        }
        case 'object': {
          const fields = m.fields ?? new Map<string, ShapeMatcher>();
          if (fields.has('__proto__')) throw new TooBig();
          lines.push(
            `if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v}) || typeof ${v}.toJSON === 'function') return false;`,
          );
          const proto = fresh('p');
          lines.push(`const ${proto} = Object.getPrototypeOf(${v});`);
          lines.push(`if (${proto} !== Object.prototype && ${proto} !== null) return false;`);
          // Exactly as many enumerable names as fields, and every field present with its shape: the
          // same names (an absent one reads as undefined or an inherited function, which no kind
          // accepts).
          const count = fresh('n');
          const name = fresh('k');
          lines.push(`let ${count} = 0;`);
          lines.push(`for (const ${name} in ${v}) ${count}++;`);
          lines.push(`if (${count} !== ${fields.size}) return false;`);
          for (const [field, child] of fields) {
            const value = fresh('v');
            lines.push(`const ${value} = ${v}[${JSON.stringify(field)}];`);
            check(value, child);
          }
          return;
        }
        default:
          throw new TooBig();
      }
    };

    check('value', matcher);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from a shape: field names are JSON string literals
    const generated = new Function('value', 'budget', `'use strict';\n${lines.join('\n')}\nreturn true;`) as (
      value: unknown,
      budget: { nodes: number },
    ) => boolean;
    // An enumerable name on Object.prototype is listed by for-in in every object and read through
    // any absent field: then nothing is certain.
    return (value) => !objectPrototypePolluted() && generated(value, { nodes: 0 });
  } catch {
    return null;
  }
}

/** Whether Object.prototype has an enumerable name, which for-in would list in every plain object. */
function objectPrototypePolluted(): boolean {
  for (const name in Object.prototype) return name !== undefined;
  return false;
}
